/**
 * Scenario 4, recall: `recall(index, query)` over ~200 varied queries on the notes of 10,000 engrams,
 * after one `buildRecallIndex`; plus the real `worker recall` command line, cold (no cache
 * in the state folder) and with its cache.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { RepoContext } from "../src/context/repo-context.js";
import type { RecallNote } from "../src/core/recall/notes.js";
import { buildRecallIndex, recall } from "../src/core/recall/recall.js";
import { loadEngrams, readCatalog } from "../src/repo/memory-tree.js";
import { memoryNotes } from "../src/worker/recall.js";
import type { BenchQuery } from "./fixtures.js";
import { gc, log, mean, median, percentile, round, runCli, WORKER_CLI } from "./util.js";

export const RECALL_TARGET_P50_MS = 20;

export interface RecallScenarioResult {
  engrams: number;
  notes: number;
  queries: number;
  load_engrams_ms: number;
  index_build_ms: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
  mean_hits: number;
  queries_without_hits: number;
  cli: { cold_ms: number; cached_ms: number; cached_runs_ms: number[]; note: string };
  target: string;
  pass: boolean;
}

export interface RecallTimings {
  result: RecallScenarioResult;
  /** Milliseconds per query, in the order of the queries given. */
  perQueryMs: number[];
  hitsPerQuery: number[];
}

export async function runRecallScenario(
  ctx: RepoContext,
  queries: readonly BenchQuery[],
): Promise<RecallTimings> {
  const catalog = await readCatalog(ctx.repoDir);
  let t0 = performance.now();
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  const loadMs = performance.now() - t0;
  const docs: RecallNote[] = memoryNotes(
    catalog.entries.map((e) => engrams.get(e.engram_id)).filter((e) => e !== undefined),
  );
  engrams.clear();
  gc();

  // The first build pays for JIT warm-up; report the median of three.
  const builds: number[] = [];
  let index = buildRecallIndex(docs);
  for (let i = 0; i < 3; i++) {
    gc();
    t0 = performance.now();
    index = buildRecallIndex(docs);
    builds.push(performance.now() - t0);
  }
  // One warm-up pass, then the measured pass.
  for (const q of queries) recall(index, q.text);
  const perQueryMs: number[] = [];
  const hitsPerQuery: number[] = [];
  for (const q of queries) {
    t0 = performance.now();
    const hits = recall(index, q.text);
    perQueryMs.push(performance.now() - t0);
    hitsPerQuery.push(hits.length);
  }
  log(
    `recall: ${queries.length} queries, p50 ${round(percentile(perQueryMs, 50))} ms, p99 ${round(percentile(perQueryMs, 99))} ms`,
  );

  const cachePath = join(ctx.paths.root, "recall-index.json");
  if (existsSync(cachePath)) rmSync(cachePath);
  const query = (queries[0] as BenchQuery).text;
  const args = ["recall", query, "--repo", ctx.repoDir, "--json", "--no-signal"];
  const cold = await runCli<unknown[]>(WORKER_CLI, args);
  const cached: number[] = [];
  for (let i = 0; i < 3; i++) cached.push(round((await runCli<unknown[]>(WORKER_CLI, args)).ms, 1));
  log(`recall: worker recall CLI cold ${round(cold.ms, 1)} ms, cached ${cached.join(", ")} ms`);

  const p50 = percentile(perQueryMs, 50);
  return {
    perQueryMs,
    hitsPerQuery,
    result: {
      engrams: catalog.entries.length,
      notes: docs.length,
      queries: queries.length,
      load_engrams_ms: round(loadMs, 1),
      index_build_ms: round(median(builds), 1),
      p50_ms: round(p50),
      p99_ms: round(percentile(perQueryMs, 99)),
      mean_ms: round(mean(perQueryMs)),
      max_ms: round(Math.max(...perQueryMs)),
      mean_hits: round(mean(hitsPerQuery), 1),
      queries_without_hits: hitsPerQuery.filter((h) => h === 0).length,
      cli: {
        cold_ms: round(cold.ms, 1),
        cached_ms: round(median(cached), 1),
        cached_runs_ms: cached,
        note:
          "node dist/bin/worker.cjs recall QUERY --json --no-signal, process start included; cold = no " +
          "recall-index.json in the state folder (reads all 10,000 engram files), cached = the built index read from it",
      },
      target: `p50 < ${RECALL_TARGET_P50_MS} ms for recall(index, query), in process`,
      pass: p50 < RECALL_TARGET_P50_MS,
    },
  };
}
