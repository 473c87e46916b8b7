/**
 * Telemetry as a running record that two consecutive stretches of events can be joined in:
 * what `condenseTelemetry` says of events A then B is what it says of A's record joined with
 * B's. Compaction for room keeps a group's record across compactions this way (see group.ts),
 * so memory made in many small slices reads as memory made in one.
 */
import type { MemoryEvent } from "../../schema/memory-event.js";
import { compareText } from "../model/text.js";

/** Most stages, error workers and error types a record keeps (the condensed view's caps). */
const MAX_STAGES = 16;
const MAX_ERROR_WORKERS = 32;

export interface WorkerTrack {
  worker: string;
  heartbeats: number;
  progress_events: number;
  /** The last stages walked, each change once (at most 16). */
  stages: string[];
  first_ts: string;
  last_ts: string;
  /** The worker's own clock (`sent_at`) at its first and last event, for the gaps between. */
  first_sent_at: string;
  last_sent_at: string;
  /** Milliseconds: whole numbers add up the same in any grouping. */
  longest_gap_ms: number;
  span_ms: number;
  reported_ms: number;
}

export interface ErrorTrack {
  error_type: string;
  count: number;
  /** The `retryable` values seen: true, false, or null for a report without one. */
  retryable: (boolean | null)[];
  /** The first report's text, if any report had one. */
  sample?: string;
  /** The reporting workers, sorted, the first 32. */
  workers: string[];
  /** `sender NUL error_id` of each counted report that had an id, sorted. */
  ids: string[];
}

export interface TelemetryState {
  /** By worker id, sorted. */
  workers: WorkerTrack[];
  /** By error type, sorted. */
  errors: ErrorTrack[];
}

/** The record of some events, in buffer order. */
export function trackTelemetry(events: readonly MemoryEvent[]): TelemetryState {
  const byWorker = new Map<string, MemoryEvent[]>();
  const byType = new Map<string, { list: MemoryEvent[]; ids: string[] }>();
  const ids = new Set<string>();
  for (const event of events) {
    if (event.kind === "heartbeat" || event.kind === "progress") {
      const list = byWorker.get(event.sender.id);
      if (list) list.push(event);
      else byWorker.set(event.sender.id, [event]);
    } else if (event.kind === "error") {
      // Repeated reports of one error (its upstream `error_id`) count once.
      const id =
        event.error_id === undefined ? undefined : `${event.sender.id}\u0000${event.error_id}`;
      if (id !== undefined) {
        if (ids.has(id)) continue;
        ids.add(id);
      }
      const type = event.error_type ?? "unknown";
      let group = byType.get(type);
      if (group === undefined) {
        group = { list: [], ids: [] };
        byType.set(type, group);
      }
      group.list.push(event);
      if (id !== undefined) group.ids.push(id);
    }
  }
  const workers = [...byWorker.entries()].map(([worker, list]) => workerTrackOf(worker, list));
  const errors = [...byType.entries()].map(([type, { list, ids: counted }]) => {
    const sample = list.find((e) => e.text !== undefined)?.text;
    return {
      error_type: type,
      count: list.length,
      retryable: [...new Set(list.map((e) => e.retryable ?? null))],
      ...(sample !== undefined ? { sample } : {}),
      workers: [...new Set(list.map((e) => e.sender.id))].sort().slice(0, MAX_ERROR_WORKERS),
      ids: counted.sort(),
    };
  });
  return {
    workers: workers.sort((a, b) => compareText(a.worker, b.worker)),
    errors: errors.sort((a, b) => compareText(a.error_type, b.error_type)),
  };
}

/**
 * `a` then `b` (every event of `b` came after those of `a`), as one record. Neither is
 * changed. An error `b` reports again under an id `a` counted is not counted twice.
 */
export function joinTelemetry(a: TelemetryState, b: TelemetryState): TelemetryState {
  const workers = new Map(a.workers.map((w) => [w.worker, { ...w, stages: [...w.stages] }]));
  for (const w of b.workers) {
    const track = workers.get(w.worker);
    if (track === undefined) workers.set(w.worker, { ...w, stages: [...w.stages] });
    else joinWorker(track, w);
  }
  const counted = new Set(a.errors.flatMap((e) => e.ids));
  const errors = new Map(a.errors.map((e) => [e.error_type, cloneError(e)]));
  for (const e of b.errors) {
    // Reports of an error `a` already counted (the same sender's same error id) count once:
    // only the count changes, its type, retry flag and text being those `a` kept.
    const repeated = counted.size === 0 ? 0 : e.ids.filter((id) => counted.has(id)).length;
    const one = {
      ...cloneError(e),
      count: e.count - repeated,
      ids: repeated === 0 ? [...e.ids] : e.ids.filter((id) => !counted.has(id)),
    };
    if (one.count <= 0) continue;
    const track = errors.get(e.error_type);
    if (track === undefined) errors.set(e.error_type, one);
    else joinError(track, one);
  }
  return {
    workers: [...workers.values()].sort((x, y) => compareText(x.worker, y.worker)),
    errors: [...errors.values()].sort((x, y) => compareText(x.error_type, y.error_type)),
  };
}

/**
 * One worker's heartbeats and progress. Durations and gaps come from its own clock (its
 * `sent_at` deltas): skew between machines cancels out, and batch ingest (one receipt stamp
 * for many events) does not flatten them. Order is still the Director's (buffer sequence).
 */
function workerTrackOf(worker: string, list: readonly MemoryEvent[]): WorkerTrack {
  const stages: string[] = [];
  let longest = 0;
  let span = 0;
  let reported = 0;
  let heartbeats = 0;
  let previous: string | undefined;
  for (const event of list) {
    if (event.stage !== undefined && stages[stages.length - 1] !== event.stage) {
      stages.push(event.stage);
    }
    if (event.kind === "heartbeat") heartbeats++;
    if (event.kind === "progress" && event.duration_ms !== undefined) reported += event.duration_ms;
    if (previous !== undefined) {
      const gap = Math.max(0, Date.parse(event.sent_at) - Date.parse(previous));
      longest = Math.max(longest, gap);
      span += gap;
    }
    previous = event.sent_at;
  }
  const first = list[0] as MemoryEvent;
  const last = list[list.length - 1] as MemoryEvent;
  return {
    worker,
    heartbeats,
    progress_events: list.length - heartbeats,
    stages: stages.slice(-MAX_STAGES),
    first_ts: first.received_at,
    last_ts: last.received_at,
    first_sent_at: first.sent_at,
    last_sent_at: last.sent_at,
    longest_gap_ms: longest,
    span_ms: span,
    reported_ms: reported,
  };
}

/** Adds `b` (later) to `a`. */
function joinWorker(a: WorkerTrack, b: WorkerTrack): void {
  const gap = Math.max(0, Date.parse(b.first_sent_at) - Date.parse(a.last_sent_at));
  a.longest_gap_ms = Math.max(a.longest_gap_ms, gap, b.longest_gap_ms);
  a.span_ms += gap + b.span_ms;
  a.reported_ms += b.reported_ms;
  a.heartbeats += b.heartbeats;
  a.progress_events += b.progress_events;
  const stages = b.stages[0] === a.stages[a.stages.length - 1] ? b.stages.slice(1) : b.stages;
  a.stages = [...a.stages, ...stages].slice(-MAX_STAGES);
  a.last_ts = b.last_ts;
  a.last_sent_at = b.last_sent_at;
}

function cloneError(e: ErrorTrack): ErrorTrack {
  return { ...e, retryable: [...e.retryable], workers: [...e.workers], ids: [...e.ids] };
}

/** Adds `b` (later) to `a`. */
function joinError(a: ErrorTrack, b: ErrorTrack): void {
  a.count += b.count;
  for (const r of b.retryable) if (!a.retryable.includes(r)) a.retryable.push(r);
  if (a.sample === undefined && b.sample !== undefined) a.sample = b.sample;
  a.workers = sortedUnion(a.workers, b.workers).slice(0, MAX_ERROR_WORKERS);
  a.ids = sortedUnion(a.ids, b.ids);
}

function sortedUnion(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}
