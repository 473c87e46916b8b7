/**
 * Start-up as an agent meets it: each command a fresh process of the bundled bins (dist/bin,
 * what package.json's bin names), timed from spawn to exit, interleaved with `node -e 0` (the
 * floor) so that a busy moment weighs on all alike. Then
 * `worker emit` throughput: sequential calls (a hook's view) and concurrent callers.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { listSpoolFiles } from "../src/state/spool.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import {
  DIRECTOR_CLI,
  log,
  median,
  percentile,
  removeDir,
  round,
  runNode,
  tempDir,
  WORKER_CLI,
} from "./util.js";

export const STARTUP_RATIO_TARGET = 1.5;
const ROUNDS = 15;

interface CommandFigure {
  command: string;
  runs: number;
  p50_ms: number;
  p90_ms: number;
  floor_p50_ms: number;
  ratio_to_floor: number;
}

export interface StartupScenarioResult {
  floor: { command: string; p50_ms: number; p90_ms: number };
  commands: CommandFigure[];
  emit_throughput: {
    sequential: { calls: number; seconds: number; calls_per_s: number; p50_ms: number };
    concurrent: {
      callers: number;
      seconds: number;
      calls_per_s: number;
      p50_ms: number;
      p95_ms: number;
      spooled: number;
    };
  };
  target: string;
  pass: boolean;
}

const COMMANDS: { name: string; args: (repo: string) => string[] }[] = [
  {
    name: "worker emit (spool)",
    args: (repo) => [WORKER_CLI, "emit", "--kind", "fact", "--text", "start-up", "--repo", repo],
  },
  { name: "worker recall", args: (repo) => [WORKER_CLI, "recall", "compaction", "--repo", repo] },
  { name: "worker check", args: (repo) => [WORKER_CLI, "check", "--offline", "--repo", repo] },
  { name: "director status", args: (repo) => [DIRECTOR_CLI, "status", "--repo", repo] },
];

async function timedRun(args: string[]): Promise<number> {
  const r = await runNode(args);
  // worker check exits 1 on findings; anything else is a failure of the bench.
  if (r.code !== 0 && r.code !== 1) {
    throw new Error(`${args.slice(1).join(" ")} exited ${r.code}: ${r.stderr.slice(-1000)}`);
  }
  return r.ms;
}

export async function runStartupScenario(
  sequentialCalls = 1000,
  concurrentCallers = 50,
): Promise<StartupScenarioResult> {
  const work = tempDir("startup");
  try {
    const repo = join(work, "repo");
    const ctx = await initBenchRepo(repo, ROOMY_BUDGETS);
    const git = spawnSync("git", ["init", "-q", "-b", "main", repo]);
    if (git.status !== 0) throw new Error(`git init failed: ${git.stderr}`);
    const floorRuns: number[] = [];
    const runs = new Map<string, number[]>(COMMANDS.map((c) => [c.name, []]));
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      floorRuns.push(await timedRun(["-e", "0"]));
      for (const c of COMMANDS) runs.get(c.name)?.push(await timedRun(c.args(repo)));
    }
    const floorP50 = median(floorRuns);
    const commands = COMMANDS.map((c) => {
      const samples = runs.get(c.name) as number[];
      const p50 = median(samples);
      return {
        command: c.name,
        runs: samples.length,
        p50_ms: round(p50, 1),
        p90_ms: round(percentile(samples, 90), 1),
        floor_p50_ms: round(floorP50, 1),
        ratio_to_floor: round(p50 / floorP50, 2),
      };
    });
    for (const c of commands) {
      log(`startup: ${c.command} p50 ${c.p50_ms} ms = ${c.ratio_to_floor}x node -e 0`);
    }

    const emit = COMMANDS[0] as (typeof COMMANDS)[number];
    const sequential: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < sequentialCalls; i++) sequential.push(await timedRun(emit.args(repo)));
    const seqSeconds = (performance.now() - t0) / 1000;
    log(`startup: ${sequentialCalls} sequential worker emit in ${round(seqSeconds, 1)} s`);

    const before = listSpoolFiles(ctx.paths.spool).length;
    const t1 = performance.now();
    const concurrent = await Promise.all(
      Array.from({ length: concurrentCallers }, () => timedRun(emit.args(repo))),
    );
    const concSeconds = (performance.now() - t1) / 1000;
    log(`startup: ${concurrentCallers} concurrent worker emit in ${round(concSeconds, 2)} s`);

    const pass = commands.every((c) => c.ratio_to_floor <= STARTUP_RATIO_TARGET);
    return {
      floor: {
        command: "node -e 0",
        p50_ms: round(floorP50, 1),
        p90_ms: round(percentile(floorRuns, 90), 1),
      },
      commands,
      emit_throughput: {
        sequential: {
          calls: sequentialCalls,
          seconds: round(seqSeconds, 2),
          calls_per_s: round(sequentialCalls / seqSeconds, 1),
          p50_ms: round(median(sequential), 1),
        },
        concurrent: {
          callers: concurrentCallers,
          seconds: round(concSeconds, 2),
          calls_per_s: round(concurrentCallers / concSeconds, 1),
          p50_ms: round(median(concurrent), 1),
          p95_ms: round(percentile(concurrent, 95), 1),
          spooled: listSpoolFiles(ctx.paths.spool).length - before,
        },
      },
      target: `each command's process wall p50 <= ${STARTUP_RATIO_TARGET}x node -e 0 measured in the same run (${ROUNDS} interleaved rounds)`,
      pass,
    };
  } finally {
    removeDir(work);
  }
}
