import type { MemoryEvent } from "../../schema/memory-event.js";
import { compareText } from "../model/text.js";
import { secondsBetween } from "../model/time.js";
import type { WorkerSighting } from "./liveness.js";

/** One worker as the buffered events show it. */
export interface WorkerState {
  worker: string;
  /** Receipt time of its newest event, and how long ago that was. */
  last_seen: string;
  age_seconds: number;
  /** Heard from within `heartbeat_ttl_seconds`. */
  live: boolean;
  stage: string | null;
  issue: string | null;
  progress: number | null;
  attempt: number | null;
  heartbeats: number;
  errors: number;
  main_ancestor_sha: string | null;
  catalog_hash_seen: string | null;
  /** It reported a catalog other than the current one. */
  catalog_mismatch: boolean;
}

export interface ErrorSummary {
  error_type: string;
  count: number;
  workers: string[];
  last_seen: string;
}

export interface SwarmView {
  workers: WorkerState[];
  errors: ErrorSummary[];
}

/**
 * The swarm as the events still in the buffer show it: per worker its latest stage, issue
 * and progress, liveness against the heartbeat TTL (receipt times, never worker clocks), the
 * catalog it last reported, and errors grouped by type. `remembered` are the sightings that
 * compactions kept (`liveness.ts`): a worker whose events left the buffer is still known.
 */
export function summarizeSwarm(
  events: readonly MemoryEvent[],
  now: string,
  ttlSeconds: number,
  catalogHash: string,
  remembered: readonly WorkerSighting[] = [],
): SwarmView {
  const workers = new Map<string, WorkerState>();
  const rememberedAt = new Map(remembered.map((s) => [s.worker, s.last_seen]));
  for (const s of remembered) {
    workers.set(s.worker, {
      ...s,
      age_seconds: 0,
      live: false,
      heartbeats: 0,
      errors: 0,
      catalog_mismatch: false,
    });
  }
  const errors = new Map<string, ErrorSummary>();
  const errorIds = new Set<string>();
  for (const event of events) {
    if (event.sender.role !== "worker") continue;
    const id = event.sender.id;
    let state = workers.get(id);
    if (!state) {
      state = {
        worker: id,
        last_seen: event.received_at,
        age_seconds: 0,
        live: false,
        stage: null,
        issue: null,
        progress: null,
        attempt: null,
        heartbeats: 0,
        errors: 0,
        main_ancestor_sha: null,
        catalog_hash_seen: null,
        catalog_mismatch: false,
      };
      workers.set(id, state);
    }
    if (event.received_at > state.last_seen) state.last_seen = event.received_at;
    if (event.kind === "heartbeat") state.heartbeats++;
    // A buffered event older than what a compaction remembered does not take its place.
    if (!(event.received_at < (rememberedAt.get(id) ?? ""))) {
      if (event.stage !== undefined) state.stage = event.stage;
      if (event.issue !== undefined) state.issue = event.issue;
      if (event.progress !== undefined) state.progress = event.progress;
      if (event.attempt !== undefined) state.attempt = event.attempt;
      if (event.main_ancestor_sha !== undefined) state.main_ancestor_sha = event.main_ancestor_sha;
      if (event.catalog_hash_seen !== undefined) state.catalog_hash_seen = event.catalog_hash_seen;
    }
    if (event.kind === "error") {
      // Repeated reports of one error (its upstream `error_id`) count once.
      if (event.error_id !== undefined) {
        const seen = `${id}\u0000${event.error_id}`;
        if (errorIds.has(seen)) continue;
        errorIds.add(seen);
      }
      state.errors++;
      const type = event.error_type ?? "unknown";
      const group = errors.get(type) ?? {
        error_type: type,
        count: 0,
        workers: [],
        last_seen: event.received_at,
      };
      group.count++;
      if (!group.workers.includes(id)) group.workers.push(id);
      if (event.received_at > group.last_seen) group.last_seen = event.received_at;
      errors.set(type, group);
    }
  }
  for (const state of workers.values()) {
    state.age_seconds = Math.max(0, secondsBetween(state.last_seen, now));
    state.live = state.age_seconds <= ttlSeconds;
    state.catalog_mismatch =
      state.catalog_hash_seen !== null && state.catalog_hash_seen !== catalogHash;
  }
  return {
    workers: [...workers.values()].sort((a, b) => compareText(a.worker, b.worker)),
    errors: [...errors.values()]
      .map((g) => ({ ...g, workers: [...g.workers].sort() }))
      .sort((a, b) => b.count - a.count || compareText(a.error_type, b.error_type)),
  };
}

/** At most this many workers in MEMORY.md's "Now" section: the focus is memory, not a dashboard. */
export const NOW_MAX_WORKERS = 12;

/**
 * The "Now" lines of MEMORY.md: each live worker's stage, issue and progress, most recently
 * heard first (receipt time), then by id.
 */
export function nowLines(swarm: SwarmView): string[] {
  return swarm.workers
    .filter((w) => w.live && (w.stage !== null || w.issue !== null))
    .sort((a, b) => compareText(b.last_seen, a.last_seen) || compareText(a.worker, b.worker))
    .slice(0, NOW_MAX_WORKERS)
    .map((w) => {
      const parts = [
        w.stage ?? "working",
        ...(w.issue !== null ? [`issue ${w.issue}`] : []),
        ...(w.progress !== null ? [`${Math.round(w.progress * 100)}%`] : []),
      ];
      return `${w.worker}: ${parts.join(", ")}`;
    });
}
