import type { MemoryEvent } from "../../schema/memory-event.js";
import { compareText } from "../model/text.js";

/**
 * What a compaction must not forget of a worker: when it was last heard from and what it
 * last said of its work. The buffer loses its heartbeats when it is compacted; this record,
 * one entry per worker, keeps `director status` telling a live worker from a silent one.
 */
export interface WorkerSighting {
  worker: string;
  /** Receipt time of its newest event (never its own clock). */
  last_seen: string;
  stage: string | null;
  issue: string | null;
  progress: number | null;
  attempt: number | null;
  main_ancestor_sha: string | null;
  catalog_hash_seen: string | null;
}

export interface LivenessRecord {
  version: 1;
  workers: WorkerSighting[];
}

/** At most this many workers are remembered: the most recently heard from are kept. */
export const LIVENESS_MAX_WORKERS = 1000;

const MAX_TEXT = 256;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function emptyLiveness(): LivenessRecord {
  return { version: 1, workers: [] };
}

/**
 * Folds the workers' events about to leave the buffer into the record. Idempotent (a cycle
 * replayed after a crash folds the same events again to the same record) and bounded.
 */
export function foldSightings(
  record: LivenessRecord,
  events: readonly MemoryEvent[],
): LivenessRecord {
  const byWorker = new Map(record.workers.map((w) => [w.worker, { ...w }]));
  for (const event of events) {
    if (event.sender.role !== "worker") continue;
    const id = event.sender.id;
    let s = byWorker.get(id);
    if (!s) {
      s = {
        worker: id,
        last_seen: event.received_at,
        stage: null,
        issue: null,
        progress: null,
        attempt: null,
        main_ancestor_sha: null,
        catalog_hash_seen: null,
      };
      byWorker.set(id, s);
    }
    // An older event (a replay) does not overwrite what a newer one said.
    if (event.received_at < s.last_seen) continue;
    s.last_seen = event.received_at;
    if (event.stage !== undefined) s.stage = event.stage;
    if (event.issue !== undefined) s.issue = event.issue;
    if (event.progress !== undefined) s.progress = event.progress;
    if (event.attempt !== undefined) s.attempt = event.attempt;
    if (event.main_ancestor_sha !== undefined) s.main_ancestor_sha = event.main_ancestor_sha;
    if (event.catalog_hash_seen !== undefined) s.catalog_hash_seen = event.catalog_hash_seen;
  }
  const workers = [...byWorker.values()]
    .sort((a, b) => compareText(b.last_seen, a.last_seen) || compareText(a.worker, b.worker))
    .slice(0, LIVENESS_MAX_WORKERS)
    .sort((a, b) => compareText(a.worker, b.worker));
  return { version: 1, workers };
}

const text = (v: unknown): v is string => typeof v === "string" && v.length <= MAX_TEXT;
const textOrNull = (v: unknown) => v === null || text(v);

/**
 * The record from the state folder's JSON, which may come from anyone's pull request: entries
 * that are not well formed are left out (the next compaction writes the record again), and
 * `problems` says which, so a reader can tell.
 */
export function parseLiveness(json: unknown): { record: LivenessRecord; problems: string[] } {
  const problems: string[] = [];
  const o = json as { version?: unknown; workers?: unknown } | null;
  if (typeof o !== "object" || o === null || o.version !== 1 || !Array.isArray(o.workers)) {
    return { record: emptyLiveness(), problems: ["expected {version: 1, workers: [...]}"] };
  }
  const workers: WorkerSighting[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of o.workers.slice(0, LIVENESS_MAX_WORKERS).entries()) {
    const w = raw as Record<string, unknown> | null;
    const ok =
      typeof w === "object" &&
      w !== null &&
      text(w.worker) &&
      (w.worker as string).length > 0 &&
      typeof w.last_seen === "string" &&
      ISO.test(w.last_seen) &&
      textOrNull(w.stage) &&
      textOrNull(w.issue) &&
      (w.progress === null || Number.isFinite(w.progress)) &&
      (w.attempt === null || Number.isFinite(w.attempt)) &&
      textOrNull(w.main_ancestor_sha) &&
      textOrNull(w.catalog_hash_seen) &&
      !seen.has(w.worker as string);
    if (!ok) {
      problems.push(`workers[${i}]: not a well-formed sighting, left out`);
      continue;
    }
    seen.add(w.worker as string);
    workers.push({
      worker: w.worker as string,
      last_seen: w.last_seen as string,
      stage: w.stage as string | null,
      issue: w.issue as string | null,
      progress: w.progress as number | null,
      attempt: w.attempt as number | null,
      main_ancestor_sha: w.main_ancestor_sha as string | null,
      catalog_hash_seen: w.catalog_hash_seen as string | null,
    });
  }
  if (o.workers.length > LIVENESS_MAX_WORKERS) {
    problems.push(`more than ${LIVENESS_MAX_WORKERS} workers, the rest left out`);
  }
  return { record: { version: 1, workers }, problems };
}
