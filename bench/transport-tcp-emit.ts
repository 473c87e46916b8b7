/**
 * Fifty agents on the Director's machine each run `worker emit --bus tcp://` at the same
 * moment against one `director serve`: how many are acknowledged by the hub, and how many
 * fall back to the spool (and why). Every emit is a whole process (start-up, its git reads
 * for the hello's drift fields, connect, hello, welcome, send, ack), all started together on
 * the same machine as the hub. The workers sit on a branch behind main, so the hub judges
 * each one's drift (git reads) as it says hello.
 *
 *   node dist/bench/transport-tcp-emit.js     one run, the result as JSON on stdout
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import { startHub } from "./transport-tcp.js";
import { log, median, percentile, removeDir, round, runNode, tempDir, WORKER_CLI } from "./util.js";

export interface TcpEmitScenarioResult {
  writers: number;
  acknowledged: number;
  spooled: number;
  /** Why the spooled ones fell back, counted by reason (addresses taken out). */
  fallback_reasons: Record<string, number>;
  /** From the first spawn to the last exit. */
  wall_s: number;
  /** Process wall of one emit, spawn to exit. */
  p50_ms: number;
  p95_ms: number;
  hub: { connections: number; refused_at_cap: number; accepted: number };
  target: string;
  pass: boolean;
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "engram bench",
  GIT_AUTHOR_EMAIL: "bench@engram.invalid",
  GIT_COMMITTER_NAME: "engram bench",
  GIT_COMMITTER_EMAIL: "bench@engram.invalid",
};

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

/** The Director's repository with a main of 40 commits, and a worker's clone on a branch behind it. */
async function repositories(dir: string): Promise<{ director: string; worker: string }> {
  const director = join(dir, "director");
  await initBenchRepo(director, ROOMY_BUDGETS);
  git(director, ["checkout", "-q", "-b", "main"]);
  git(director, ["add", "-A"]);
  git(director, ["commit", "-q", "-m", "engram init"]);
  for (let i = 0; i < 40; i++) git(director, ["commit", "-q", "--allow-empty", "-m", `main ${i}`]);
  const worker = join(dir, "worker");
  git(dir, ["clone", "-q", director, worker]);
  git(worker, ["checkout", "-q", "-b", "feature", "HEAD~10"]);
  git(worker, ["commit", "-q", "--allow-empty", "-m", "worker's own change"]);
  return { director, worker };
}

async function stopHub(child: ChildProcess): Promise<Record<string, number>> {
  let out = "";
  child.stdout?.on("data", (chunk: string) => {
    out += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await exited;
  return JSON.parse(out.trim().split("\n").pop() ?? "{}") as Record<string, number>;
}

export async function runTcpEmitScenario(writers = 50): Promise<TcpEmitScenarioResult> {
  const dir = tempDir("tcp-emit");
  try {
    const repos = await repositories(dir);
    const { child, address } = await startHub(repos.director);
    log(`tcp_emit: hub on ${address}; ${writers} worker emit processes at once`);
    const t0 = performance.now();
    const runs = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        runNode(
          [
            WORKER_CLI,
            "emit",
            "--kind",
            "fact",
            "--text",
            `concurrent emit ${i}`,
            "--worker",
            `agent-${i}`,
            "--bus",
            `tcp://${address}`,
            "--json",
          ],
          { cwd: repos.worker },
        ),
      ),
    );
    const wall = (performance.now() - t0) / 1000;
    const hub = await stopHub(child);
    let acknowledged = 0;
    let spooled = 0;
    const reasons: Record<string, number> = {};
    for (const run of runs) {
      if (run.code !== 0)
        throw new Error(`worker emit exited ${run.code}: ${run.stderr.slice(-500)}`);
      const out = JSON.parse(run.stdout) as { spooled: boolean; fallback_reason?: string };
      if (!out.spooled) {
        acknowledged++;
        continue;
      }
      spooled++;
      const reason = (out.fallback_reason ?? "none").replace(/\d+\.\d+\.\d+\.\d+:\d+: /, "");
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    const walls = runs.map((r) => r.ms);
    const result: TcpEmitScenarioResult = {
      writers,
      acknowledged,
      spooled,
      fallback_reasons: reasons,
      wall_s: round(wall, 2),
      p50_ms: round(median(walls), 1),
      p95_ms: round(percentile(walls, 95), 1),
      hub: {
        connections: hub.connections ?? -1,
        refused_at_cap: hub.refused_at_cap ?? -1,
        accepted: hub.accepted ?? -1,
      },
      target: `all ${writers} acknowledged by the hub, none spooled`,
      pass: acknowledged === writers,
    };
    log(
      `tcp_emit: ${acknowledged} acknowledged, ${spooled} spooled of ${writers} in ${result.wall_s} s (p50 ${result.p50_ms} ms, p95 ${result.p95_ms} ms per emit)`,
    );
    return result;
  } finally {
    removeDir(dir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runTcpEmitScenario();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
