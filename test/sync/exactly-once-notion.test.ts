/**
 * Exactly once against a Notion that behaves like Notion on a bad day, through the
 * `director sync run` bin: a page exists before its answer arrives, answers get lost, 5xx
 * come after the write, queries see a new page only later, 429 bursts carry a Retry-After
 * that is enforced, the server goes down mid-run. The kill points and latencies come from a
 * seeded generator (ENGRAM_CRASH_SEED to reproduce); the seed is printed with a failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { QueueStore } from "../../src/sync/queue-store.js";
import { assertBuilt, DIRECTOR_BIN, director, spawnBin } from "../support/bins.js";
import { killWhen } from "../support/crash.js";
import { FakeNotion, type NotionFault } from "../support/fake-notion.js";
import { Rng } from "../support/random.js";
import { TempDirs } from "../support/repo.js";
import {
  episodeNote,
  json,
  notionSyncRepo,
  SYNC_EPOCH,
  SYNC_TOKEN,
  syncEnv,
} from "../support/sync-repo.js";

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_127);
const dirs = new TempDirs();
let server: FakeNotion | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

/** Queries see a new page 30 s (Director's clock) after it was made: under the 60 s settle. */
const LAG_MS = 30_000;
const PAGES = /^\/v1\/pages$/;
/** Budgets that keep all 200 episodes in memory (nothing evicted before it is synced). */
const ROOMY = [
  "st_max_files = 100000",
  "lt_max_files = 100000",
  "st_max_total_bytes = 1073741824",
  "lt_max_total_bytes = 1073741824",
];

/** A server whose clock is the Director's: `at(seconds)` moves both. */
function lagging(perSecond: number): { server: FakeNotion; at: (seconds: number) => void } {
  const s = new FakeNotion({ token: SYNC_TOKEN, perSecond, visibilityLagMs: LAG_MS });
  let now = SYNC_EPOCH * 1000;
  s.clock = () => now;
  return {
    server: s,
    at: (seconds) => {
      now = (SYNC_EPOCH + seconds) * 1000;
    },
  };
}

interface RunJson {
  sent: { created_or_updated: number; failed: number; retry_later: number; deferred: number };
  depth: { pending: number; failed: number };
  stats: { processed: number; succeeded: number; failed: number; deferred: number };
}

function expectExactlyOnce(notion: FakeNotion, expected: readonly string[]): void {
  const contents = notion.store
    .pagesOf("Episodes")
    .map((p) => p.content)
    .sort();
  const missing = expected.filter((t) => !contents.includes(t));
  expect({ missing, doubled: notion.doubles() }).toEqual({ missing: [], doubled: [] });
  expect(contents).toEqual([...expected].sort());
}

describe("sync is exactly once against a Notion that answers late, loses answers and lags", () => {
  it("kill -9 at seeded moments, pages created before their answers, then clean runs", async () => {
    const rng = new Rng(SEED);
    onTestFailed(() => console.error(`exactly-once kill test: ENGRAM_CRASH_SEED=${SEED}`));
    const bad = lagging(50);
    server = bad.server;
    const notion = bad.server;
    const url = await notion.start();
    const notes = Array.from({ length: 30 }, (_, i) => episodeNote(`episode ${i}`, 0.9, "failure"));
    const repo = await notionSyncRepo(dirs, notes, url, 50);
    // Every create takes a while to answer, and the page exists from the start of that while.
    let holdAt = -1;
    notion.script = (r) =>
      r.method === "POST" && PAGES.test(r.path)
        ? r.creates + 1 === holdAt
          ? { kind: "delay", ms: 60_000 }
          : { kind: "delay", ms: rng.int(2, 25) }
        : undefined;
    let killed = 0;
    for (let round = 0; round < 5; round++) {
      bad.at(round);
      const target = notion.creates + rng.int(1, 5);
      // Half the rounds die while a create's answer is on its way, half at a random moment.
      const inWindow = round % 2 === 0;
      holdAt = inWindow ? target : -1;
      const spawned = spawnBin(DIRECTOR_BIN, ["sync", "run"], {
        cwd: repo.dir,
        env: syncEnv(round),
      });
      killWhen(spawned, () => notion.creates >= target, inWindow ? 0 : rng.int(0, 40));
      const r = await spawned.done;
      if (r.signal === "SIGKILL") killed++;
    }
    expect(killed).toBeGreaterThan(0);
    expect(notion.creates).toBeGreaterThan(0);
    notion.script = undefined;
    // Clean runs later on, past the retry delays and the store's lag.
    for (const seconds of [2000, 4000, 6000, 8000]) {
      bad.at(seconds);
      const r = json<RunJson>(
        await director(["sync", "run", "--json"], {
          cwd: repo.dir,
          env: syncEnv(seconds),
          timeoutMs: 60_000,
        }),
      );
      expect(r.stats.processed).toBe(r.stats.succeeded + r.stats.failed + r.stats.deferred);
    }
    expectExactlyOnce(
      notion,
      notes.map((n) => n.text),
    );
  });

  it("200 items through 5xx after the write, lost answers, 429 bursts, a stretch of 500s and an outage", async () => {
    const bad = lagging(100);
    server = bad.server;
    const notion = bad.server;
    const url = await notion.start();
    const notes = Array.from({ length: 200 }, (_, i) => episodeNote(`item ${i}`, 0.9, "failure"));
    const repo = await notionSyncRepo(dirs, notes, url, 100, { memory: ROOMY });
    // The script counts attempts to create a page (the n-th POST /v1/pages).
    let attempts = 0;
    notion.script = (r): NotionFault | undefined => {
      if (r.method !== "POST" || !PAGES.test(r.path)) return undefined;
      const n = attempts++;
      if (n >= 10 && n < 14) return { kind: "status", status: 500, afterWrite: true };
      if (n === 20) return { kind: "lost" };
      if (n === 25) return { kind: "status", status: 503, afterWrite: true };
      // A burst the client rides out (Retry-After 1 s, its own two retries)...
      if (n === 30 || n === 31) return { kind: "status", status: 429, retryAfter: 1 };
      // ...and one longer than its retries (Retry-After 2 s): the engine waits it out.
      if (n >= 40 && n < 43) return { kind: "status", status: 429, retryAfter: 2 };
      // A stretch of 500s long enough to exhaust an item's retries.
      if (n >= 60 && n < 72) return { kind: "status", status: 500 };
      if (n === 110) {
        notion.setDown(true);
        return { kind: "lost" };
      }
      return undefined;
    };
    const runAt = async (seconds: number) => {
      bad.at(seconds);
      const r = json<RunJson>(
        await director(["sync", "run", "--json"], {
          cwd: repo.dir,
          env: syncEnv(seconds),
          timeoutMs: 120_000,
        }),
      );
      expect(r.stats.processed).toBe(r.stats.succeeded + r.stats.failed + r.stats.deferred);
      return r;
    };
    let seconds = 0;
    let last = await runAt(seconds);
    for (let run = 0; run < 10 && (last.depth.pending > 0 || last.depth.failed > 0); run++) {
      // The outage ends between runs.
      notion.setDown(false);
      seconds += 2000;
      last = await runAt(seconds);
    }
    expect(attempts).toBeGreaterThan(110);
    expect(notion.lostAnswers).toBeGreaterThanOrEqual(6);
    expectExactlyOnce(
      notion,
      notes.map((n) => n.text),
    );
    expect(notion.earlyRequests).toBe(0);
    const queue = new QueueStore(`${repo.dir}/.engram/sync`, "notion").load();
    expect(Object.values(queue.records).filter((r) => r.state !== "synced")).toEqual([]);
  }, 300_000);
});
