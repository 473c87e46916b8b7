/**
 * Hybrid recall through the bins: `worker recall --confidence` against the local Notion
 * server. Repository A syncs its episodes to the store; repository B shares A's databases
 * (another team's knowledge) and recalls what its own memory does not hold.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, type BinResult, director, worker } from "../support/bins.js";
import { FakeNotion } from "../support/fake-notion.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import {
  episodeNote,
  json,
  notionSyncRepo,
  ok,
  SYNC_TOKEN,
  syncEnv,
} from "../support/sync-repo.js";
import { waitUntil } from "../support/wait.js";

interface Recall {
  hits: { source: string; path: string }[];
  remote_hits: { source: string; cached: boolean; title: string; local_id: string | null }[];
  remote: {
    mode: string;
    asked: boolean;
    targets: { target: string; state: string; hits: number; message: string | null }[];
  };
  notices: string[];
}

const TTL = 3600;
const dirs = new TempDirs();
const server = new FakeNotion({ token: SYNC_TOKEN, perSecond: 50 });
let b: TempRepo;

beforeAll(async () => {
  assertBuilt();
  const url = await server.start();
  const a = await notionSyncRepo(
    dirs,
    [
      episodeNote("canary rollout broke checkout", 0.9, "failure"),
      episodeNote("blue green switch lost sessions", 0.1, "success"),
    ],
    url,
  );
  ok(await director(["sync", "run"], { cwd: a.dir, env: syncEnv(1) }));
  const ids = JSON.parse(
    readFileSync(join(a.dir, ".engram", "sync", "notion", "databases.json"), "utf8"),
  ) as Record<string, { database_id: string }>;
  b = await notionSyncRepo(
    dirs,
    [episodeNote("cache warmup lesson for the build", 0.5, "partial")],
    url,
    50,
    {
      sync: [`recall_cache_ttl_seconds = ${TTL}`],
      notion: [
        "[sync.notion.databases]",
        `episodes = "${ids.episode?.database_id}"`,
        `insights = "${ids.insight?.database_id}"`,
        `patterns = "${ids.pattern?.database_id}"`,
        `evolution = "${ids.evolution?.database_id}"`,
      ],
    },
  );
});

afterAll(async () => {
  await server.stop();
  dirs.cleanup();
});

const queries = () => server.requests.filter((r) => r.path.endsWith("/query")).length;

async function recall(repo: TempRepo, args: string[], seconds = 10): Promise<Recall> {
  return json<Recall>(
    await worker(["recall", ...args, "--no-signal", "--json"], {
      cwd: repo.dir,
      env: syncEnv(seconds),
      timeoutMs: 60_000,
    }),
  );
}

describe("worker recall --confidence through the bins", () => {
  it("below 0.5 asks the store at once, then answers from the cache within the TTL", async () => {
    const before = queries();
    const first = await recall(b, ["canary rollout", "--confidence", "0.3"]);
    expect(first.hits).toEqual([]);
    expect(first.remote.mode).toBe("now");
    expect(first.remote_hits[0]).toMatchObject({ source: "notion", cached: false });
    expect(first.remote_hits[0]?.title).toContain("canary rollout");
    expect(first.remote.targets).toEqual([
      expect.objectContaining({ target: "notion", state: "queried", hits: 1 }),
    ]);
    const asked = queries() - before;
    expect(asked).toBeGreaterThan(0);

    const again = await recall(b, ["rollout canary", "--confidence", "0.3"], 20);
    expect(again.remote_hits).toEqual([
      expect.objectContaining({
        source: "notion",
        cached: true,
        title: first.remote_hits[0]?.title,
      }),
    ]);
    expect(again.remote.targets[0]?.state).toBe("cached");
    expect(queries() - before).toBe(asked);

    // --refresh asks again; past the TTL the cache is stale.
    const refreshed = await recall(b, ["canary rollout", "--confidence", "0.3", "--refresh"], 30);
    expect(refreshed.remote_hits[0]?.cached).toBe(false);
    expect(queries() - before).toBe(2 * asked);
    const expired = await recall(b, ["canary rollout", "--confidence", "0.3"], 30 + TTL + 1);
    expect(expired.remote_hits[0]?.cached).toBe(false);
    expect(queries() - before).toBe(3 * asked);
  });

  it("from 0.5 to 0.7 asks only on a local miss", async () => {
    const before = queries();
    const hit = await recall(b, ["cache warmup", "--confidence", "0.6"]);
    expect(hit.hits.length).toBeGreaterThan(0);
    expect(hit.hits[0]?.source).toBe("local");
    expect(hit.remote.asked).toBe(false);
    expect(queries()).toBe(before);

    const miss = await recall(b, ["sessions lost", "--confidence", "0.6"]);
    expect(miss.hits).toEqual([]);
    expect(miss.remote.asked).toBe(true);
    expect(miss.remote_hits[0]?.title).toContain("blue green switch lost sessions");
    expect(queries()).toBeGreaterThan(before);
  });

  it("at 0.7 or more answers locally and validates in the background for the next recall", async () => {
    const first = await recall(b, ["checkout", "--confidence", "0.9"]);
    expect(first.remote_hits).toEqual([]);
    expect(first.remote.targets[0]?.state).toBe("deferred");
    expect(first.notices.join("\n")).toMatch(/background/);
    const cache = join(b.dir, ".engram", "sync", "recall-cache.json");
    const filled = () =>
      existsSync(cache) && readFileSync(cache, "utf8").includes('"notion|checkout"');
    await waitUntil(filled, "the background validation to fill the recall cache", 100);
    const next = await recall(b, ["checkout", "--confidence", "0.9"]);
    expect(next.remote_hits[0]).toMatchObject({ source: "notion", cached: true });
    expect(next.remote_hits[0]?.title).toContain("checkout");
  });

  it("a related item synced after the answer was cached invalidates it", async () => {
    const cached = await recall(b, ["warmup", "--confidence", "0.3"], 100);
    const again = await recall(b, ["warmup", "--confidence", "0.3"], 110);
    expect(again.remote.targets[0]?.state).toBe("cached");
    // B learns something about warmup and syncs it: the cached answer cannot hold it.
    const file = b.write(
      "more.ndjson",
      `${JSON.stringify(episodeNote("warmup of the cache failed on arm runners", 0.9, "failure"))}\n`,
    );
    ok(await worker(["emit", "--from", file], { cwd: b.dir, env: syncEnv(120) }));
    ok(await director(["run", "--force"], { cwd: b.dir, env: syncEnv(130) }));
    ok(await director(["sync", "run"], { cwd: b.dir, env: syncEnv(140) }));
    const after = await recall(b, ["warmup", "--confidence", "0.3"], 150);
    expect(after.remote.targets[0]?.state).toBe("queried");
    expect(after.remote_hits.length).toBeGreaterThan(cached.remote_hits.length);
    expect(after.remote_hits.some((h) => h.title.includes("arm runners"))).toBe(true);
  });

  it("the extension hit rate counts remote recalls that found something", async () => {
    const status = json<{ metrics: { extension_hit_rate: number | null } }>(
      await director(["sync", "status", "--json"], { cwd: b.dir, env: syncEnv(200) }),
    );
    const logDir = join(b.dir, ".engram", "sync", "log");
    const log = readdirSync(logDir)
      .map((name) => readFileSync(join(logDir, name), "utf8"))
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { op: string; ok: boolean; error?: string });
    const recalls = log.filter((e) => e.op === "recall" && e.error === undefined);
    expect(recalls.length).toBeGreaterThan(3);
    const rate = recalls.filter((e) => e.ok).length / recalls.length;
    expect(status.metrics.extension_hit_rate).toBeCloseTo(rate, 3);
  });

  it("with the store down or not set up, answers from local memory and says so", async () => {
    server.setDown(true);
    try {
      const r = await worker(
        ["recall", "cache warmup", "--confidence", "0.2", "--refresh", "--no-signal", "--json"],
        { cwd: b.dir, env: syncEnv(300), timeoutMs: 60_000 },
      );
      const down = json<Recall>(r);
      expect(down.hits.length).toBeGreaterThan(0);
      expect(down.remote_hits).toEqual([]);
      expect(down.remote.targets[0]?.state).toBe("unavailable");
      expect(down.notices.join("\n")).toMatch(/notion unreachable .*local memory only/);
      expect(r.stderr).toMatch(/notion unreachable/);
      const text: BinResult = await worker(
        ["recall", "cache warmup", "--confidence", "0.2", "--refresh", "--no-signal"],
        { cwd: b.dir, env: syncEnv(310), timeoutMs: 60_000 },
      );
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/cache warmup/);
      expect(text.stdout).toMatch(/notion: unavailable/);
    } finally {
      server.setDown(false);
    }
    // Rate limited for a long while: reported at once, not waited out (the agent waits too).
    server.inject({ kind: "status", status: 429, retryAfter: 45 });
    const limited = await recall(b, ["cache warmup", "--confidence", "0.2", "--refresh"], 320);
    expect(limited.hits.length).toBeGreaterThan(0);
    expect(limited.remote.targets[0]).toMatchObject({ state: "unavailable" });
    expect(limited.remote.targets[0]?.message).toMatch(/429/);
    const bare = dirs.repo("engram-bare-");
    ok(await director(["init"], { cwd: bare.dir }));
    const none = await recall(bare, ["anything at all", "--confidence", "0.1"]);
    expect(none.remote.asked).toBe(false);
    expect(none.notices.join("\n")).toMatch(/no external store is set up/);
  });
});
