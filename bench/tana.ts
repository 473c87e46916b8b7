/**
 * Tana scenario: 100 learnings through the Tana target to the local Tana stand-in, batched
 * into Input API calls of at most 100 nodes and 5000 characters. Once with the stand-in's
 * one-call-per-second limit on (goal: wall time within 15% of calls / 1 s, no call refused or
 * over a limit) and once with it off (goal: under 3 s).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { DEFAULT_SCHEDULE } from "../src/core/sync/queue.js";
import { runSync } from "../src/sync/engine.js";
import { QueueStore } from "../src/sync/queue-store.js";
import { SyncLog } from "../src/sync/sync-log.js";
import { TanaTarget } from "../src/sync/targets/tana-target.js";
import { FakeTana } from "../test/support/fake-tana.js";
import {
  seedTanaEntities,
  TANA_REGISTRY,
  tanaCandidates,
  tanaConfig,
  tanaEngrams,
} from "../test/support/tana-fixtures.js";
import { log, removeDir, round, tempDir } from "./util.js";

export const TANA_LEARNINGS = 100;

interface Leg {
  learnings: number;
  calls: number;
  learnings_per_call: number;
  seconds: number;
  limit_per_second: number | null;
  refused: number;
  over_limit: number;
}

export interface TanaScenarioResult {
  limited: Leg & { ideal_seconds: number; over_ideal: number };
  unlimited: Leg;
  target: string;
  pass: boolean;
}

async function leg(limited: boolean): Promise<Leg> {
  const tana = new FakeTana({ token: "bench", localToken: "bench-local", rateLimit: limited });
  await tana.start();
  const dir = tempDir("tana");
  try {
    seedTanaEntities(tana);
    const target = new TanaTarget({
      config: tanaConfig(tana, { calls_per_second: limited ? 1 : 100 }),
      token: "bench",
      localToken: "bench-local",
      registry: TANA_REGISTRY,
      schema: null,
      clock: () => "2026-01-05T10:00:00.000Z",
    });
    // The supertags first (two calls), which also warms the server up; not measured.
    await target.health();
    await target.ensureSchema();
    const candidates = tanaCandidates(tanaEngrams(TANA_LEARNINGS));
    const before = tana.calls.length;
    const t0 = performance.now();
    const result = await runSync(candidates, {
      store: new QueueStore(dir, "tana"),
      target,
      schedule: DEFAULT_SCHEDULE,
      clock: () => "2026-01-05T10:00:00.000Z",
      log: new SyncLog(join(dir, "log"), 8),
      sealKey: () => undefined,
    });
    const seconds = (performance.now() - t0) / 1000;
    if (result.sent.created_or_updated !== TANA_LEARNINGS) {
      throw new Error(`tana: ${result.sent.created_or_updated} of ${TANA_LEARNINGS} sent`);
    }
    const calls = tana.calls.length - before;
    return {
      learnings: TANA_LEARNINGS,
      calls,
      learnings_per_call: round(TANA_LEARNINGS / calls, 1),
      seconds: round(seconds, 2),
      limit_per_second: limited ? 1 : null,
      refused: tana.refused.rate + tana.refused.nodes + tana.refused.chars,
      over_limit: limited ? tana.overLimit : 0,
    };
  } finally {
    await tana.stop();
    removeDir(dir);
  }
}

export async function runTanaScenario(): Promise<TanaScenarioResult> {
  const unlimited = await leg(false);
  log(
    `tana: ${TANA_LEARNINGS} learnings without a limit: ${unlimited.calls} calls in ${unlimited.seconds} s`,
  );
  const limited = await leg(true);
  // One call a second allows `calls` calls in `calls` seconds.
  const ideal = limited.calls;
  log(
    `tana: ${TANA_LEARNINGS} learnings at 1 call/s: ${limited.calls} calls in ${limited.seconds} s (ideal ${ideal} s)`,
  );
  const overIdeal = round(limited.seconds / ideal - 1, 3);
  return {
    limited: { ...limited, ideal_seconds: ideal, over_ideal: overIdeal },
    unlimited,
    target: "limited: within 15% of calls / 1 s, no call refused or over a limit; unlimited: < 3 s",
    pass:
      Math.abs(overIdeal) <= 0.15 &&
      limited.refused === 0 &&
      limited.over_limit === 0 &&
      unlimited.refused === 0 &&
      unlimited.seconds < 3,
  };
}
