/**
 * Exactly once against a Tana that behaves like Tana on a bad day, through the
 * `director sync run --target tana` bin: nodes exist before their call's answer arrives,
 * answers get lost, 5xx come after the write, the Local API's search shows a new node only
 * 30 s (Director's clock) later, 429s carry a Retry-After that is enforced, either API goes
 * down mid-run. The kill points come from a seeded generator (ENGRAM_CRASH_SEED to reproduce).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { QueueStore } from "../../src/sync/queue-store.js";
import { assertBuilt, DIRECTOR_BIN, director, spawnBin, worker } from "../support/bins.js";
import { killWhen } from "../support/crash.js";
import { FakeTana, QUICK_TANA_RATE, type TanaFault } from "../support/fake-tana.js";
import { Rng } from "../support/random.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";
import { json, ok, SYNC_EPOCH } from "../support/sync-repo.js";
import { tanaRepoConfig } from "../support/tana-fixtures.js";

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_127);
const LAG_MS = 30_000;
const dirs = new TempDirs();
let tana: FakeTana | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await tana?.stop();
  tana = undefined;
});
afterAll(() => dirs.cleanup());

const env = (seconds: number) => ({
  SOURCE_DATE_EPOCH: String(SYNC_EPOCH + seconds),
  TANA_TOKEN: "in-tok",
  TANA_LOCAL_TOKEN: "loc-tok",
});

/** A stand-in whose clock is the Director's: `at(seconds)` moves both. */
function lagging(): { fake: FakeTana; at: (seconds: number) => void } {
  const fake = new FakeTana({
    token: "in-tok",
    localToken: "loc-tok",
    searchLagMs: LAG_MS,
    perSecond: QUICK_TANA_RATE,
  });
  let now = SYNC_EPOCH * 1000;
  fake.clock = () => now;
  return {
    fake,
    at: (seconds) => {
      now = (SYNC_EPOCH + seconds) * 1000;
    },
  };
}

/** A repository with `n` confirmed learnings on main and Tana's supertags made. */
async function tanaRepo(fake: FakeTana, n: number): Promise<{ repo: TempRepo; keys: number }> {
  const repo = dirs.repo("engram-tana-once-");
  ok(await director(["init"], { cwd: repo.dir }));
  // A few learnings a call (each is a dozen nodes with its fields): many calls, so kills and faults land between them.
  repo.writeConfig(`${tanaRepoConfig(fake)}max_nodes_per_call = 40\ntimeout_seconds = 5\n`);
  const notes = Array.from({ length: n }, (_, i) => ({
    kind: "lesson",
    text: `lesson ${i}: pin step ${i} of the release`,
    confidence: 0.95,
    privacy: "public",
    topics: ["once"],
  }));
  const file = repo.write("notes.ndjson", `${notes.map((x) => JSON.stringify(x)).join("\n")}\n`);
  ok(await worker(["emit", "--from", file], { cwd: repo.dir, env: env(0) }));
  ok(await director(["run", "--force"], { cwd: repo.dir, env: env(0) }));
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", "memory"]);
  ok(await director(["sync", "init", "--target", "tana"], { cwd: repo.dir, env: env(0) }));
  return { repo, keys: n };
}

interface RunJson {
  sent: { created_or_updated: number; deferred: number };
  depth: { pending: number; failed: number };
  stats: { processed: number; succeeded: number; failed: number; deferred: number };
}

/** Every learning node once: trashed copies count too (a double must not hide in the trash). */
function expectExactlyOnce(fake: FakeTana, keys: number): void {
  const copies = new Map<string, number>();
  for (const node of fake.store.nodes.values()) {
    const key = /^engram (learning:\S+) /.exec(node.description)?.[1];
    if (key !== undefined) copies.set(key, (copies.get(key) ?? 0) + 1);
  }
  const doubled = [...copies].filter(([, c]) => c > 1).map(([k]) => k);
  expect({ keys: copies.size, doubled }).toEqual({ keys, doubled: [] });
}

async function cleanRun(repo: TempRepo, seconds: number): Promise<RunJson> {
  const r = json<RunJson>(
    await director(["sync", "run", "--target", "tana", "--json"], {
      cwd: repo.dir,
      env: env(seconds),
      timeoutMs: 120_000,
    }),
  );
  expect(r.stats.processed).toBe(r.stats.succeeded + r.stats.failed + r.stats.deferred);
  return r;
}

describe("Tana sync is exactly once when answers are late, lost or wrong", () => {
  it("kill -9 at seeded moments, nodes made before their answers, then clean runs", async () => {
    const rng = new Rng(SEED);
    onTestFailed(() => console.error(`exactly-once Tana kill test: ENGRAM_CRASH_SEED=${SEED}`));
    const bad = lagging();
    tana = bad.fake;
    const fake = bad.fake;
    await fake.start();
    const { repo, keys } = await tanaRepo(fake, 24);
    let holdAt = -1;
    // Every call takes a while to answer, and its nodes exist from the start of that while.
    fake.inputScript = (r): TanaFault =>
      r.writes + 1 === holdAt
        ? { kind: "delay", ms: 60_000 }
        : { kind: "delay", ms: rng.int(2, 40) };
    let killed = 0;
    for (let round = 0; round < 5; round++) {
      bad.at(round);
      const target = fake.writes + rng.int(1, 3);
      // Half the rounds die while a call's answer is on its way, half at a random moment.
      const inWindow = round % 2 === 0;
      holdAt = inWindow ? target : -1;
      const spawned = spawnBin(DIRECTOR_BIN, ["sync", "run", "--target", "tana"], {
        cwd: repo.dir,
        env: env(round),
      });
      killWhen(spawned, () => fake.writes >= target, inWindow ? 0 : rng.int(0, 400));
      if ((await spawned.done).signal === "SIGKILL") killed++;
    }
    expect(killed).toBeGreaterThan(0);
    fake.inputScript = undefined;
    for (const seconds of [2000, 4000, 6000]) {
      bad.at(seconds);
      await cleanRun(repo, seconds);
    }
    expectExactlyOnce(fake, keys);
    expect(fake.earlyRequests).toBe(0);
    const queue = new QueueStore(`${repo.dir}/.engram/sync`, "tana").load();
    expect(Object.values(queue.records).filter((r) => r.state !== "synced")).toEqual([]);
  }, 300_000);

  it("5xx after the write, lost answers, 429 bursts, a stretch of 500s, outages of both APIs", async () => {
    const bad = lagging();
    tana = bad.fake;
    const fake = bad.fake;
    await fake.start();
    const { repo, keys } = await tanaRepo(fake, 40);
    const rng = new Rng(SEED + 1);
    let calls = 0;
    fake.inputScript = (): TanaFault | undefined => {
      const n = calls++;
      if (n === 0) return { kind: "status", status: 500, afterWrite: true };
      if (n === 1) return { kind: "lost" };
      if (n === 2) return { kind: "status", status: 503, afterWrite: true };
      // A 429 the client rides out, then one it gives up on (Retry-After 2 s, three times).
      if (n === 3) return { kind: "status", status: 429, retryAfter: 1 };
      if (n >= 5 && n < 9) return { kind: "status", status: 429, retryAfter: 2 };
      if (n >= 10 && n < 14) return { kind: "status", status: 500 };
      if (n === 16) {
        fake.setInputDown(true);
        return { kind: "lost" };
      }
      // Every other call answers late: its nodes exist before the answer comes.
      return { kind: "delay", ms: rng.int(2, 40) };
    };
    let searches = 0;
    fake.localScript = (r): TanaFault | undefined => {
      if (r.path !== "/nodes/search") return undefined;
      const n = searches++;
      if (n === 3) return { kind: "status", status: 429, retryAfter: 1 };
      if (n === 6) return { kind: "status", status: 503 };
      if (n === 9) fake.setLocalDown(true);
      return undefined;
    };
    let seconds = 0;
    bad.at(seconds);
    let last = await cleanRun(repo, seconds);
    for (let run = 0; run < 10 && (last.depth.pending > 0 || last.depth.failed > 0); run++) {
      // The outages end between runs.
      fake.setInputDown(false);
      fake.setLocalDown(false);
      seconds += 2000;
      bad.at(seconds);
      last = await cleanRun(repo, seconds);
    }
    expect(calls).toBeGreaterThan(16);
    expect(fake.lostAnswers).toBeGreaterThanOrEqual(3);
    expectExactlyOnce(fake, keys);
    expect(fake.earlyRequests).toBe(0);
    const queue = new QueueStore(`${repo.dir}/.engram/sync`, "tana").load();
    expect(Object.values(queue.records).filter((r) => r.state !== "synced")).toEqual([]);
  }, 300_000);
});
