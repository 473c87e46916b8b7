/**
 * Sync scenarios: 100 items through the Notion target to the local Notion server, once with
 * its 3 requests/s limit on (goal: wall time within 15% of requests / 3 s, one request per
 * item) and once with it off (goal: under 3 s); and a sync run with nothing to do on the
 * 10,000-engram fixture (goal: under 300 ms).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { RepoContext } from "../src/context/repo-context.js";
import type { SyncCandidate } from "../src/core/sync/item.js";
import { DEFAULT_SCHEDULE } from "../src/core/sync/queue.js";
import { defaultConfig } from "../src/schema/config.js";
import { runSync } from "../src/sync/engine.js";
import { QueueStore } from "../src/sync/queue-store.js";
import { memorySource, queueStore, scheduleOf, syncLog } from "../src/sync/service.js";
import { SyncLog } from "../src/sync/sync-log.js";
import { MemoryTarget } from "../src/sync/targets/memory-target.js";
import { NotionTarget } from "../src/sync/targets/notion-target.js";
import { FakeNotion } from "../test/support/fake-notion.js";
import { episodeItem } from "../test/support/sync-items.js";
import { log, median, removeDir, round, tempDir } from "./util.js";

export const SYNC_ITEMS = 100;
export const NOOP_SYNC_TARGET_MS = 300;

interface Leg {
  items: number;
  requests: number;
  requests_per_item: number;
  seconds: number;
  limit_per_second: number | null;
}

export interface SyncScenarioResult {
  limited: Leg & { ideal_seconds: number; over_ideal: number; rate_violations: number };
  unlimited: Leg;
  target: string;
  pass: boolean;
}

function candidates(n: number): SyncCandidate[] {
  return Array.from({ length: n }, (_, i) => {
    const item = episodeItem(`ep_bench${i}`, `What happened in episode ${i}, and what it taught.`);
    return { item, verdict: { sync: true, priority: 1, reasons: ["bench"] } };
  });
}

async function leg(perSecond: number | null): Promise<Leg & { violations: number }> {
  const token = "bench-token";
  const server = new FakeNotion({ token, ...(perSecond !== null ? { perSecond } : {}) });
  const url = await server.start();
  const dir = tempDir("sync");
  try {
    const target = new NotionTarget({
      config: {
        ...defaultConfig().sync.notion,
        base_url: url,
        parent_page_id: "bench",
        requests_per_second: perSecond ?? 100,
      },
      token,
      recorded: {},
    });
    // Setting up the databases also warms the server up: the first requests of a cold process
    // are read late, which makes them look bunched (the pacing is measured after that).
    await target.ensureSchema();
    server.rateViolations = 0;
    server.earlyRequests = 0;
    const before = server.requests.length;
    const t0 = performance.now();
    await runSync(candidates(SYNC_ITEMS), {
      store: new QueueStore(dir, "notion"),
      target,
      schedule: DEFAULT_SCHEDULE,
      clock: () => "2026-01-05T10:00:00.000Z",
      log: new SyncLog(join(dir, "log"), 8),
      sealKey: () => undefined,
    });
    const seconds = (performance.now() - t0) / 1000;
    const requests = server.requests.length - before;
    const creates = server.requests
      .slice(before)
      .filter((r) => r.method === "POST" && r.path === "/v1/pages").length;
    return {
      items: SYNC_ITEMS,
      requests,
      requests_per_item: round(creates / SYNC_ITEMS, 2),
      seconds: round(seconds, 2),
      limit_per_second: perSecond,
      violations: server.rateViolations + server.earlyRequests,
    };
  } finally {
    await server.stop();
    removeDir(dir);
  }
}

export async function runSyncScenario(): Promise<SyncScenarioResult> {
  const limited = await leg(3);
  const ideal = limited.requests / 3;
  log(
    `sync: ${SYNC_ITEMS} items at 3 req/s: ${limited.requests} requests in ${limited.seconds} s (ideal ${round(ideal, 1)} s)`,
  );
  const unlimited = await leg(null);
  log(
    `sync: ${SYNC_ITEMS} items without a limit: ${unlimited.requests} requests in ${unlimited.seconds} s`,
  );
  const { violations, ...l } = limited;
  const { violations: _, ...u } = unlimited;
  const overIdeal = round(limited.seconds / ideal - 1, 3);
  return {
    limited: {
      ...l,
      ideal_seconds: round(ideal, 2),
      over_ideal: overIdeal,
      rate_violations: violations,
    },
    unlimited: u,
    target:
      "limited: within 15% of requests / 3 s, one request per item, no rate violation; unlimited: < 3 s",
    pass:
      Math.abs(overIdeal) <= 0.15 &&
      limited.requests_per_item === 1 &&
      violations === 0 &&
      unlimited.seconds < 3,
  };
}

export interface NoopSyncResult {
  engrams: number;
  candidates: number;
  runs_ms: number[];
  median_ms: number;
  target: string;
  pass: boolean;
}

/** A sync run with nothing to send on the fixture: candidates from every engram, queue, no send. */
export async function runNoopSyncScenario(
  ctx: RepoContext,
  engrams: number,
): Promise<NoopSyncResult> {
  const target = new MemoryTarget();
  const runs: number[] = [];
  let count = 0;
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    const store = queueStore(ctx, "notion");
    const memory = await memorySource(ctx);
    const result = await runSync(
      async (queue) => {
        const list = await memory.load(queue);
        count = list.length;
        return list;
      },
      {
        sourceHash: memory.hash,
        store,
        target,
        schedule: scheduleOf(ctx),
        clock: () => "2026-01-05T10:00:00.000Z",
        log: syncLog(ctx),
        sealKey: () => undefined,
      },
    );
    if (result.sent.failed > 0) throw new Error("no-op sync: sends failed");
    // The first run queues what the policy accepts (and sends it to the in-memory target);
    // the runs after it have nothing to do, and are the ones measured.
    if (i > 0) runs.push(round(performance.now() - t0, 1));
  }
  const med = round(median(runs), 1);
  log(`sync: no-op run on ${engrams} engrams (${count} candidates), runs ${runs.join(", ")} ms`);
  return {
    engrams,
    candidates: count,
    runs_ms: runs,
    median_ms: med,
    target: `< ${NOOP_SYNC_TARGET_MS} ms`,
    pass: med < NOOP_SYNC_TARGET_MS,
  };
}
