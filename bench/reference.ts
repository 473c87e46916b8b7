/**
 * Scenario 6, reference: the reference MCP memory server (`@modelcontextprotocol/server-memory`)
 * holding the same 10,000 engrams as knowledge-graph entities, queried over stdio with the
 * official SDK client (`search_nodes`), with the same queries as engram's recall.
 */
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Engram } from "../src/schema/engram.js";
import type { BenchQuery } from "./fixtures.js";
import { log, mb, mean, percentile, round } from "./util.js";

/** The server's entry point (its package `bin`), found through module resolution. */
export function referenceServerPath(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-memory/package.json");
  return join(dirname(pkg), "dist", "index.js");
}

/**
 * The server's storage format (read from its dist/index.js, `saveGraph`): one JSON object per
 * line, `{"type":"entity","name","entityType","observations"}`, lines joined by "\n".
 * Observations carry what engram's recall indexes: facts, decisions, topics.
 */
export function writeReferenceJsonl(path: string, engrams: readonly Engram[]): number {
  const lines = engrams.map((e) =>
    JSON.stringify({
      type: "entity",
      name: `${e.topics[0] ?? "engram"} ${e.engram_id}`,
      entityType: e.scope === "lt" ? "long-term memory" : "short-term memory",
      observations: [
        ...e.facts,
        ...e.decisions.map((d) => `Decision: ${d.title} Rationale: ${d.rationale}`),
        `Topics: ${e.topics.join(", ")}`,
      ],
    }),
  );
  const text = lines.join("\n");
  writeFileSync(path, text);
  return Buffer.byteLength(text, "utf8");
}

export interface ReferenceScenarioResult {
  server: string;
  entities: number;
  jsonl_mb: number;
  queries: number;
  startup_ms: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  mean_entities_returned: number;
  /** Queries that matched nothing: the floor (re-read and scan of the whole file, tiny reply). */
  p50_ms_no_match: number | null;
  errors: number;
  engram_recall_p50_ms_same_queries: number;
  engram_recall_p99_ms_same_queries: number;
  ratio_p50: number;
  notes: string[];
}

export async function runReferenceScenario(
  workDir: string,
  engrams: readonly Engram[],
  queries: readonly BenchQuery[],
  engramMs: readonly number[],
): Promise<ReferenceScenarioResult> {
  const file = join(workDir, "memory.jsonl");
  const bytes = writeReferenceJsonl(file, engrams);
  const server = referenceServerPath();
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [server],
    env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: file },
    stderr: "pipe",
  });
  const client = new Client({ name: "engram-bench", version: "0.1.0" });
  const times: number[] = [];
  const returned: number[] = [];
  let errors = 0;
  let startup = 0;
  try {
    await client.connect(transport);
    startup = performance.now() - t0;
    const search = async (query: string): Promise<number> => {
      const result = await client.callTool({ name: "search_nodes", arguments: { query } });
      if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 300));
      const content = result.content as { type: string; text?: string }[];
      const graph = JSON.parse(content[0]?.text ?? "{}") as { entities?: unknown[] };
      return graph.entities?.length ?? 0;
    };
    // Warm-up: the server's first calls pay for JIT and file-cache misses.
    for (const q of queries.slice(0, 3)) await search(q.text).catch(() => 0);
    for (const q of queries) {
      const start = performance.now();
      try {
        const n = await search(q.text);
        times.push(performance.now() - start);
        returned.push(n);
      } catch (error) {
        errors++;
        log(
          `reference: search_nodes ${JSON.stringify(q.text)} failed: ${(error as Error).message}`,
        );
      }
    }
  } finally {
    await client.close();
  }
  const noMatch = times.filter((_, i) => returned[i] === 0);
  const p50 = percentile(times, 50);
  const engramP50 = percentile(engramMs, 50);
  log(
    `reference: ${queries.length} search_nodes calls, p50 ${round(p50, 1)} ms (engram ${round(engramP50)} ms)`,
  );
  return {
    server: "@modelcontextprotocol/server-memory (stdio, official SDK client)",
    entities: engrams.length,
    jsonl_mb: mb(bytes),
    queries: queries.length,
    startup_ms: round(startup, 1),
    p50_ms: round(p50),
    p99_ms: round(percentile(times, 99)),
    mean_ms: round(mean(times)),
    mean_entities_returned: round(mean(returned), 1),
    p50_ms_no_match: noMatch.length > 0 ? round(percentile(noMatch, 50)) : null,
    errors,
    engram_recall_p50_ms_same_queries: round(engramP50),
    engram_recall_p99_ms_same_queries: round(percentile(engramMs, 99)),
    ratio_p50: round(p50 / engramP50, 1),
    notes: [
      "ratio_p50 = reference p50 / engram in-process recall p50 over the same queries.",
      "The reference figure is a round trip to a long-lived server process over stdio (JSON-RPC), and " +
        "its search_nodes re-reads and re-parses the whole JSONL file on every call, then substring-matches " +
        "the raw query. engram's in-process figure is what a long-lived process (an MCP server or agent " +
        "host holding the index) pays per query, so it is the fair comparison; a one-shot `worker recall` " +
        "CLI call also pays process start and loading (see recall.cli).",
      "The reference returns every matching entity (mean_entities_returned); engram returns the 10 best " +
        "(BM25 + topics + recency + tier). Natural-language queries match nothing in the reference, since " +
        "it matches the whole query as one substring.",
    ],
  };
}
