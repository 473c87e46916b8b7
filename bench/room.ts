/**
 * Compaction for room against a budget that holds everything, in the same run: the same
 * ~100,000-event file ingested (`director ingest FILE`) into a 5,000-event buffer, which
 * compacts for room as it goes, then `director run --flush`; against the same ingest into
 * a buffer that holds it all, then the same flush. Whole processes, start-up included,
 * interleaved rounds so that a busy moment of the machine weighs on both alike. The
 * processes' CPU time (every thread, user and system) is reported too: on a loaded machine
 * it varies far less than their wall time, which stays the target.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { swarmStreamOptions, writeEnvelopeFile } from "./envelope-fixtures.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import {
  BENCH_DIR,
  countEngrams,
  DIRECTOR_CLI,
  log,
  mb,
  median,
  removeDir,
  round,
  runNode,
  tempDir,
} from "./util.js";

export const ROOM_RATIO_TARGET = 1.2;
const TIGHT_EVENTS = 5_000;
const RUNS = 3;

interface Round {
  ingest_ms: number;
  flush_ms: number;
  total_ms: number;
  /** CPU time of the two processes (user + system, every thread). */
  ingest_cpu_ms: number;
  flush_cpu_ms: number;
  total_cpu_ms: number;
}

interface Side {
  buffer_max_events: number;
  runs: Round[];
  median_ingest_ms: number;
  median_flush_ms: number;
  median_total_ms: number;
  median_total_cpu_ms: number;
  /** What the flush's JSON said of the ingest's compactions for room (last round). */
  compacted_for_room: {
    compactions: number;
    events: number;
    engrams: number;
    written_by_ingest: number;
  } | null;
  flush_compacted_events: number;
  engram_files: number;
}

export interface RoomScenarioResult {
  input: { lines: number; mb: number };
  roomy: Side;
  tight: Side;
  /** tight (ingest + flush) / roomy (ingest + flush), medians of the rounds' totals. */
  ratio: number;
  /** The same ratio of the processes' CPU time (reported, not the target). */
  cpu_ratio: number;
  target: string;
  pass: boolean;
}

interface RunJson {
  compacted_events: number;
  compacted_for_room: Side["compacted_for_room"];
}

const CPU_PRELOAD = join(BENCH_DIR, "cpu-usage.js");

/** Runs a Director command, its wall time and its CPU time (see `cpu-usage.ts`). */
async function director(work: string, args: readonly string[]) {
  const cpuFile = join(work, "cpu.json");
  rmSync(cpuFile, { force: true });
  const run = await runNode(["--import", CPU_PRELOAD, DIRECTOR_CLI, ...args], {
    env: { ...process.env, ENGRAM_BENCH_CPU_FILE: cpuFile },
  });
  if (run.code !== 0) throw new Error(`director ${args[0]} exited ${run.code}: ${run.stderr}`);
  const cpu = JSON.parse(readFileSync(cpuFile, "utf8")) as { user_us: number; system_us: number };
  return { ...run, cpuMs: (cpu.user_us + cpu.system_us) / 1000 };
}

async function oneRound(work: string, file: string, events: number, run: number) {
  const repo = join(work, `repo-${events}-${run}`);
  await initBenchRepo(repo, { ...ROOMY_BUDGETS, buffer_max_events: events });
  try {
    const ingest = await director(work, ["ingest", file, "--repo", repo, "--json"]);
    const flush = await director(work, ["run", "--flush", "--repo", repo, "--json"]);
    const json = JSON.parse(flush.stdout) as RunJson;
    return {
      round: {
        ingest_ms: round(ingest.ms, 1),
        flush_ms: round(flush.ms, 1),
        total_ms: round(ingest.ms + flush.ms, 1),
        ingest_cpu_ms: round(ingest.cpuMs, 1),
        flush_cpu_ms: round(flush.cpuMs, 1),
        total_cpu_ms: round(ingest.cpuMs + flush.cpuMs, 1),
      },
      json,
      engramFiles: countEngrams(join(repo, "memory")),
      catalog: JSON.parse(readFileSync(join(repo, "memory", "catalog.json"), "utf8")) as {
        entries: unknown[];
      },
    };
  } finally {
    removeDir(repo);
  }
}

function side(events: number, rounds: Awaited<ReturnType<typeof oneRound>>[]): Side {
  const last = rounds[rounds.length - 1] as Awaited<ReturnType<typeof oneRound>>;
  return {
    buffer_max_events: events,
    runs: rounds.map((r) => r.round),
    median_ingest_ms: round(median(rounds.map((r) => r.round.ingest_ms)), 1),
    median_flush_ms: round(median(rounds.map((r) => r.round.flush_ms)), 1),
    median_total_ms: round(median(rounds.map((r) => r.round.total_ms)), 1),
    median_total_cpu_ms: round(median(rounds.map((r) => r.round.total_cpu_ms)), 1),
    compacted_for_room: last.json.compacted_for_room,
    flush_compacted_events: last.json.compacted_events,
    engram_files: last.engramFiles,
  };
}

export async function runRoomScenario(lines = 100_000): Promise<RoomScenarioResult> {
  const work = tempDir("room");
  try {
    const file = join(work, "swarm.ndjson");
    const stats = writeEnvelopeFile(file, swarmStreamOptions(lines));
    log(`room: ${stats.lines} lines, ${mb(stats.bytes)} MB`);
    const roomy: Awaited<ReturnType<typeof oneRound>>[] = [];
    const tight: Awaited<ReturnType<typeof oneRound>>[] = [];
    for (let run = 0; run < RUNS; run++) {
      const r = await oneRound(work, file, ROOMY_BUDGETS.buffer_max_events, run);
      roomy.push(r);
      const t = await oneRound(work, file, TIGHT_EVENTS, run);
      tight.push(t);
      log(
        `room: run ${run + 1}: roomy ${Math.round(r.round.ingest_ms)} + ${Math.round(r.round.flush_ms)} ms (CPU ${Math.round(r.round.total_cpu_ms)} ms), ${TIGHT_EVENTS}-event buffer ${Math.round(t.round.ingest_ms)} + ${Math.round(t.round.flush_ms)} ms (CPU ${Math.round(t.round.total_cpu_ms)} ms)`,
      );
    }
    const a = side(ROOMY_BUDGETS.buffer_max_events, roomy);
    const b = side(TIGHT_EVENTS, tight);
    const ratio = round(b.median_total_ms / a.median_total_ms, 2);
    const cpuRatio = round(b.median_total_cpu_ms / a.median_total_cpu_ms, 2);
    return {
      input: { lines: stats.lines, mb: mb(stats.bytes) },
      roomy: a,
      tight: b,
      ratio,
      cpu_ratio: cpuRatio,
      target: `director ingest FILE + director run --flush into a ${TIGHT_EVENTS}-event buffer (compacting for room) <= ${ROOM_RATIO_TARGET}x the same into a buffer that holds it all (process wall, medians of ${RUNS} interleaved rounds)`,
      pass: ratio <= ROOM_RATIO_TARGET,
    };
  } finally {
    removeDir(work);
  }
}
