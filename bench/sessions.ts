/**
 * Sessions: one `director run` consolidating 100 ended sessions of 50 items each (one version
 * step per session; goal under 2 s), and the process wall of `worker session start`, `write`
 * and `end` as an agent's hooks meet them (goal: each under 300 ms at p50).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { runCycle } from "../src/director/run.js";
import { endSession } from "../src/sessions/end.js";
import { startSession } from "../src/sessions/session.js";
import { sessionsDir } from "../src/sessions/store.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import { log, median, percentile, removeDir, round, runNode, tempDir, WORKER_CLI } from "./util.js";

export const SESSIONS = 100;
export const ITEMS_PER_SESSION = 50;
export const CONSOLIDATION_TARGET_MS = 2000;
export const SESSION_COMMAND_TARGET_MS = 300;
const ROUNDS = 10;

export interface SessionsScenarioResult {
  consolidation: {
    sessions: number;
    items: number;
    versions: number;
    seconds: number;
    target_ms: number;
    pass: boolean;
  };
  commands: { command: string; runs: number; p50_ms: number; p90_ms: number }[];
  command_target_ms: number;
  pass: boolean;
}

/** One session's items: episodes, knowledge (some shared across sessions), state and core. */
function itemsOf(s: number): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < ITEMS_PER_SESSION; i++) {
    const base = { type: "item", written_at: "2025-11-23T00:00:00.000Z", redactions: 0 };
    const slot = i % 10;
    if (slot < 4) {
      items.push({
        ...base,
        kind: "episode",
        text: `session ${s} step ${i}: ran the suite`,
        outcome: "success",
        confidence: 0.7,
      });
    } else if (slot < 7) {
      items.push({
        ...base,
        kind: "fact",
        text: `fact ${(s * 7 + i) % 400} about the build`,
        confidence: 0.85,
      });
    } else if (slot === 7) {
      items.push({
        ...base,
        kind: "lesson",
        text: `lesson ${s}-${i}: run the migration first`,
        confidence: 0.9,
      });
    } else if (slot === 8) {
      items.push({
        ...base,
        kind: "state",
        key: `state-${i % 20}`,
        value: { session: s, step: i },
      });
    } else {
      items.push({
        ...base,
        kind: "core",
        key: `core-${i % 5}`,
        value: { [`k${s % 10}`]: i },
        confidence: 0.95,
      });
    }
  }
  return items;
}

async function consolidation(root: string): Promise<SessionsScenarioResult["consolidation"]> {
  const ctx = await initBenchRepo(join(root, "consolidate"), ROOMY_BUDGETS);
  for (let s = 0; s < SESSIONS; s++) {
    const start = await startSession(ctx, `bench ${s}`);
    const lines = itemsOf(s).map((item) => `${JSON.stringify(item)}\n`);
    appendFileSync(join(sessionsDir(ctx.paths.root), `${start.session_id}.ndjson`), lines.join(""));
    await endSession(ctx, start.session_id, { worker: "bench" }, { kind: "spool" });
  }
  const t0 = performance.now();
  const run = await runCycle(ctx);
  const ms = performance.now() - t0;
  const versions = run.sessions?.length ?? 0;
  if (versions !== SESSIONS) throw new Error(`consolidated ${versions} of ${SESSIONS} sessions`);
  return {
    sessions: SESSIONS,
    items: SESSIONS * ITEMS_PER_SESSION,
    versions,
    seconds: round(ms / 1000),
    target_ms: CONSOLIDATION_TARGET_MS,
    pass: ms < CONSOLIDATION_TARGET_MS,
  };
}

async function commands(root: string): Promise<SessionsScenarioResult["commands"]> {
  const dir = join(root, "cli");
  await initBenchRepo(dir, ROOMY_BUDGETS);
  const times: Record<string, number[]> = { start: [], write: [], end: [] };
  const timed = async (name: string, args: string[]) => {
    const r = await runNode([WORKER_CLI, "session", ...args], { cwd: dir });
    if (r.code !== 0) throw new Error(`worker session ${name} exited ${r.code}: ${r.stderr}`);
    times[name]?.push(r.ms);
    return r.stdout;
  };
  for (let round = 0; round < ROUNDS; round++) {
    const id = (JSON.parse(await timed("start", ["start", "--json"])) as { session_id: string })
      .session_id;
    for (let i = 0; i < 3; i++) {
      await timed("write", [
        "write",
        "--session",
        id,
        "--kind",
        "fact",
        "--text",
        `fact ${round}-${i}`,
        "--confidence",
        "0.9",
      ]);
    }
    await timed("end", ["end", id]);
  }
  return Object.entries(times).map(([name, ms]) => ({
    command: `worker session ${name}`,
    runs: ms.length,
    p50_ms: round(median(ms), 1),
    p90_ms: round(percentile(ms, 90), 1),
  }));
}

export async function runSessionsScenario(): Promise<SessionsScenarioResult> {
  const root = tempDir("sessions");
  try {
    log(`sessions: consolidating ${SESSIONS} sessions of ${ITEMS_PER_SESSION} items`);
    const c = await consolidation(root);
    log(`sessions: ${c.versions} versions in ${c.seconds} s`);
    const cli = await commands(root);
    for (const f of cli) log(`sessions: ${f.command} p50 ${f.p50_ms} ms`);
    return {
      consolidation: c,
      commands: cli,
      command_target_ms: SESSION_COMMAND_TARGET_MS,
      pass: c.pass && cli.every((f) => f.p50_ms < SESSION_COMMAND_TARGET_MS),
    };
  } finally {
    removeDir(root);
  }
}
