/**
 * Knowledge-graph scenario: 20 markdown memory files (one of 12,000 characters, so 22
 * episodes) through a whole `sync run --target graphiti` to the local Graphiti MCP stand-in
 * (goal: under 1.5 s; the seed asks under 15 s), a second run with nothing to send, and the
 * health check a run starts with: a fresh MCP session, `get_status` and `GET /health` (goal:
 * under 100 ms; the seed asks under 5 s).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openContext } from "../src/context/repo-context.js";
import { initRepository } from "../src/director/init.js";
import { defaultConfig } from "../src/schema/config.js";
import { syncRun } from "../src/sync/operations.js";
import { GraphitiTarget } from "../src/sync/targets/graphiti-target.js";
import { FakeGraphiti } from "../test/support/fake-graphiti.js";
import { log, median, removeDir, round, tempDir } from "./util.js";

export const GRAPHITI_FILES = 20;
export const GRAPHITI_SYNC_TARGET_S = 1.5;
export const GRAPHITI_HEALTH_TARGET_MS = 100;
const HEALTH_RUNS = 15;

export interface GraphitiScenarioResult {
  files: number;
  episodes: number;
  add_memory_calls: number;
  sync_seconds: number;
  second_run_seconds: number;
  second_run_calls: number;
  health_ms: { runs: number[]; median: number; max: number };
  target: string;
  pass: boolean;
}

function writeFiles(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const long = Array.from({ length: 120 }, (_, i) => `Paragraph ${i}: ${"observation ".repeat(8)}`)
    .join("\n\n")
    .slice(0, 12_000);
  for (let i = 0; i < GRAPHITI_FILES; i++) {
    const body =
      i === 0
        ? long
        : `# Lesson ${i}\n\nWhat step ${i} taught us about the build, in a few lines.\n`;
    const front =
      i % 7 === 3
        ? "---\ntags: [broken\n---\n"
        : `---\ncapture_type: LEARNING\nrating: ${i % 10}\ntags: [bench, t${i}]\n---\n`;
    writeFileSync(join(dir, `note-${String(i).padStart(2, "0")}.md`), `${front}${body}`);
  }
}

export async function runGraphitiScenario(): Promise<GraphitiScenarioResult> {
  const server = new FakeGraphiti();
  await server.start();
  const repoDir = tempDir("graphiti");
  // Where memory goes is the environment's choice, never the repository's (docs/security.md).
  const before = process.env.ENGRAM_GRAPHITI_URL;
  process.env.ENGRAM_GRAPHITI_URL = server.url;
  try {
    execFileSync("git", ["init", "-q", repoDir], { stdio: "ignore" });
    mkdirSync(join(repoDir, "config"), { recursive: true });
    writeFileSync(
      join(repoDir, "config", "dev.toml"),
      ["[[sources.markdown.folders]]", 'path = "notes"', ""].join("\n"),
    );
    writeFiles(join(repoDir, "notes"));
    const ctx = await openContext({ repo: repoDir });
    initRepository(ctx);

    const t0 = performance.now();
    const first = await syncRun(ctx, { target: "graphiti" });
    const syncSeconds = (performance.now() - t0) / 1000;
    if (first.stats.succeeded !== GRAPHITI_FILES) {
      throw new Error(`graphiti: ${first.stats.succeeded} of ${GRAPHITI_FILES} files synced`);
    }
    const calls = server.calls.length;
    const t1 = performance.now();
    await syncRun(ctx, { target: "graphiti" });
    const secondSeconds = (performance.now() - t1) / 1000;
    log(
      `graphiti: ${GRAPHITI_FILES} files (${server.episodes.length} episodes) in ${round(syncSeconds, 2)} s; nothing to send in ${round(secondSeconds, 2)} s`,
    );

    const runs: number[] = [];
    for (let i = 0; i < HEALTH_RUNS; i++) {
      const target = new GraphitiTarget({
        config: { ...defaultConfig().sync.graphiti, url: server.url },
      });
      const h0 = performance.now();
      const health = await target.health();
      runs.push(round(performance.now() - h0, 1));
      await target.close();
      if (!health.healthy) throw new Error(`graphiti: health check failed: ${health.message}`);
    }
    const healthMedian = median(runs);
    log(`graphiti: health check median ${healthMedian} ms of ${HEALTH_RUNS}`);
    return {
      files: GRAPHITI_FILES,
      episodes: server.episodes.length,
      add_memory_calls: calls,
      sync_seconds: round(syncSeconds, 3),
      second_run_seconds: round(secondSeconds, 3),
      second_run_calls: server.calls.length - calls,
      health_ms: { runs, median: healthMedian, max: Math.max(...runs) },
      target: `sync of ${GRAPHITI_FILES} files < ${GRAPHITI_SYNC_TARGET_S} s, second run sends nothing, health check (fresh session) median < ${GRAPHITI_HEALTH_TARGET_MS} ms`,
      pass:
        syncSeconds < GRAPHITI_SYNC_TARGET_S &&
        server.calls.length === calls &&
        healthMedian < GRAPHITI_HEALTH_TARGET_MS,
    };
  } finally {
    if (before === undefined) delete process.env.ENGRAM_GRAPHITI_URL;
    else process.env.ENGRAM_GRAPHITI_URL = before;
    await server.stop();
    removeDir(repoDir);
  }
}
