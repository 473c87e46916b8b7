/**
 * `director ingest FILE` as a user runs it, against the durable floor measured in the same
 * run: a process that reads the file, `JSON.parse`s, hashes (sha256) and appends each line,
 * with one fsync per 1,000 lines. Both are whole processes (start-up included), on the mixed
 * swarm stream, single-threaded (ENGRAM_INGEST_THREADS=0) and with the worker threads.
 */
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { IngestCounts } from "../src/ingest/ingest.js";
import { EventBuffer } from "../src/state/buffer.js";
import {
  type EnvelopeFileStats,
  longNoteStreamOptions,
  swarmStreamOptions,
  writeEnvelopeFile,
} from "./envelope-fixtures.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import {
  countEngrams,
  DIRECTOR_CLI,
  log,
  mb,
  median,
  removeDir,
  round,
  runNode,
  STEP_SCRIPT,
  tempDir,
} from "./util.js";

export const INGEST_FLOOR_RATIO_TARGET = 2;
const RUNS = 3;

/** The floor: read, parse, hash and append each line; fsync every 1,000 lines. */
export function floorStep(file: string, out: string): { lines: number } {
  const input = openSync(file, "r");
  const output = openSync(out, "a");
  const chunk = Buffer.allocUnsafe(1 << 20);
  let carry = "";
  let lines = 0;
  let pending: string[] = [];
  const commit = () => {
    writeSync(output, pending.join(""));
    fsyncSync(output);
    pending = [];
  };
  try {
    for (;;) {
      const read = readSync(input, chunk, 0, chunk.length, null);
      const text = carry + (read > 0 ? chunk.toString("utf8", 0, read) : "");
      const end = read > 0 ? text.lastIndexOf("\n") + 1 : text.length;
      let start = 0;
      while (start < end) {
        let newline = text.indexOf("\n", start);
        if (newline === -1 || newline >= end) newline = end;
        const line = text.slice(start, newline);
        start = newline + 1;
        if (line.length === 0) continue;
        try {
          JSON.parse(line);
        } catch {
          // A bad line still costs its parse.
        }
        const digest = createHash("sha256").update(line).digest("hex");
        pending.push(`${digest} ${line}\n`);
        lines++;
        if (pending.length === 1000) commit();
      }
      carry = text.slice(end);
      if (read <= 0) break;
    }
    if (pending.length > 0) commit();
  } finally {
    closeSync(input);
    closeSync(output);
  }
  return { lines };
}

interface Timed {
  runs_ms: number[];
  median_ms: number;
  lines_per_s: number;
}

/** One stream measured against its floor, interleaved round by round. */
export interface StreamFigures {
  input: { lines: number; mb: number; bytes_per_line: number; by_type: Record<string, number> };
  floor: Timed & { how: string };
  single_thread: Timed & IngestCounts & { ratio_to_floor: number };
  multi_thread: Timed & IngestCounts & { ratio_to_floor: number; threads: string };
  pass: boolean;
}

export interface IngestCliScenarioResult extends StreamFigures {
  /**
   * The same measure on a stream whose notes are long (300-2,400 characters, decisions with a
   * rationale) and a quarter of them carry a secret: the redactor's share of the work grows.
   */
  long_notes: StreamFigures & { secrets: number };
  /** The same ingest into a buffer of 5,000 events: it compacts as it goes. */
  hard_budget: IngestCounts & {
    buffer_max_events: number;
    ms: number;
    ratio_to_roomy: number;
    buffer_events_after: number;
    compacted_events: number;
    engram_files: number;
  };
  target: string;
}

function timed(runs: number[], lines: number): Timed {
  const med = median(runs);
  return {
    runs_ms: runs.map((r) => round(r, 1)),
    median_ms: round(med, 1),
    lines_per_s: Math.round(lines / (med / 1000)),
  };
}

export async function runIngestCliScenario(lines = 100_000): Promise<IngestCliScenarioResult> {
  const work = tempDir("ingest-cli");
  try {
    const file = join(work, "swarm.ndjson");
    const stats = writeEnvelopeFile(file, swarmStreamOptions(lines));
    log(`ingest-cli: ${stats.lines} lines, ${mb(stats.bytes)} MB`);
    const swarm = await measureStream(work, file, stats, "swarm");
    const longFile = join(work, "long-notes.ndjson");
    const longStats = writeEnvelopeFile(longFile, longNoteStreamOptions(lines));
    removeDir(file);
    log(`ingest-cli: long notes, ${longStats.lines} lines, ${mb(longStats.bytes)} MB`);
    const longNotes = await measureStream(work, longFile, longStats, "long notes");
    removeDir(longFile);
    writeEnvelopeFile(file, swarmStreamOptions(lines));
    const budget = await budgetRun(work, file);
    log(
      `ingest-cli: into a ${TIGHT_EVENTS}-event buffer: ${Math.round(budget.ms)} ms, ${budget.compacted_events} compacted`,
    );
    return {
      ...swarm,
      long_notes: { ...longNotes, secrets: longStats.secrets },
      hard_budget: {
        ...budget,
        ratio_to_roomy: round(budget.ms / swarm.multi_thread.median_ms, 2),
      },
      target: `director ingest FILE --json (process wall, median of ${RUNS}) <= ${INGEST_FLOOR_RATIO_TARGET}x the floor, single- and multi-threaded, on both streams`,
      pass: swarm.pass && longNotes.pass,
    };
  } finally {
    removeDir(work);
  }
}

/** Floor, one thread and the default threads, `RUNS` interleaved rounds, each in a fresh repository. */
async function measureStream(
  work: string,
  file: string,
  stats: EnvelopeFileStats,
  name: string,
): Promise<StreamFigures> {
  const floorRuns: number[] = [];
  const single: number[] = [];
  const multi: number[] = [];
  let singleCounts: IngestCounts | undefined;
  let multiCounts: IngestCounts | undefined;
  const cli = async (threads: string | undefined, run: number) => {
    const repo = join(work, `repo-${threads ?? "auto"}-${run}`);
    await initBenchRepo(repo, ROOMY_BUDGETS);
    const env = { ...process.env };
    if (threads === undefined) delete env.ENGRAM_INGEST_THREADS;
    else env.ENGRAM_INGEST_THREADS = threads;
    const r = await runNode([DIRECTOR_CLI, "ingest", file, "--repo", repo, "--json"], { env });
    if (r.code !== 0) throw new Error(`director ingest exited ${r.code}: ${r.stderr}`);
    removeDir(repo);
    return { ms: r.ms, counts: JSON.parse(r.stdout) as IngestCounts };
  };
  // Interleaved, so that a busy moment of the shared machine weighs on every figure alike.
  for (let run = 0; run < RUNS; run++) {
    const out = join(work, `floor-${run}.out`);
    const floor = await runNode([STEP_SCRIPT, "floor", file, out]);
    if (floor.code !== 0) throw new Error(`floor step failed: ${floor.stderr}`);
    removeDir(out);
    floorRuns.push(floor.ms);
    const s = await cli("0", run);
    single.push(s.ms);
    singleCounts = s.counts;
    const m = await cli(undefined, run);
    multi.push(m.ms);
    multiCounts = m.counts;
    log(
      `ingest-cli (${name}): run ${run + 1}: floor ${Math.round(floor.ms)} ms, single ${Math.round(s.ms)} ms, threads ${Math.round(m.ms)} ms`,
    );
  }
  const floor = timed(floorRuns, stats.lines);
  const s = timed(single, stats.lines);
  const m = timed(multi, stats.lines);
  const sRatio = round(s.median_ms / floor.median_ms, 2);
  const mRatio = round(m.median_ms / floor.median_ms, 2);
  return {
    input: {
      lines: stats.lines,
      mb: mb(stats.bytes),
      bytes_per_line: Math.round(stats.bytes / stats.lines),
      by_type: stats.by_type,
    },
    floor: {
      ...floor,
      how: "node dist/bench/step.js floor FILE OUT: read 1 MB chunks, JSON.parse, sha256 and append each line, one fsync per 1,000 lines (process start included)",
    },
    single_thread: { ...s, ...(singleCounts as IngestCounts), ratio_to_floor: sRatio },
    multi_thread: {
      ...m,
      ...(multiCounts as IngestCounts),
      ratio_to_floor: mRatio,
      threads:
        "ENGRAM_INGEST_THREADS unset: one worker per core beside the main thread, up to 4 (none on two cores or fewer)",
    },
    pass: sRatio <= INGEST_FLOOR_RATIO_TARGET && mRatio <= INGEST_FLOOR_RATIO_TARGET,
  };
}

const TIGHT_EVENTS = 5_000;

/** `director ingest FILE` into a buffer whose hard budget is far below the input. */
async function budgetRun(work: string, file: string) {
  const repo = join(work, "repo-tight");
  const ctx = await initBenchRepo(repo, { ...ROOMY_BUDGETS, buffer_max_events: TIGHT_EVENTS });
  try {
    const r = await runNode([DIRECTOR_CLI, "ingest", file, "--repo", repo, "--json"]);
    if (r.code !== 0) throw new Error(`director ingest exited ${r.code}: ${r.stderr}`);
    const counts = JSON.parse(r.stdout) as IngestCounts;
    const meta = JSON.parse(readFileSync(ctx.paths.meta, "utf8")) as { compacted_events: number };
    return {
      accepted: counts.accepted,
      duplicates: counts.duplicates,
      quarantined: counts.quarantined,
      redacted: counts.redacted,
      buffer_max_events: TIGHT_EVENTS,
      ms: round(r.ms, 1),
      buffer_events_after: EventBuffer.open(ctx.paths, { readOnly: true, retainEvents: false })
        .count,
      compacted_events: meta.compacted_events,
      engram_files: countEngrams(join(repo, "memory")),
    };
  } finally {
    removeDir(repo);
  }
}
