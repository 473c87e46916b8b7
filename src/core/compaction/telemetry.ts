import type { EngramBody } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { clipItem, compareText, cutText, round3 } from "../model/text.js";
import { type TelemetryState, trackTelemetry } from "./telemetry-state.js";

export type Telemetry = NonNullable<EngramBody["telemetry"]>;

/** Heartbeats and progress condensed per worker (stages, durations, stalls); errors by type. */
export function condenseTelemetry(events: readonly MemoryEvent[], stallSeconds: number): Telemetry {
  return condenseState(trackTelemetry(events), stallSeconds);
}

/** The condensed view of a telemetry record (see telemetry-state.ts). */
export function condenseState(state: TelemetryState, stallSeconds: number): Telemetry {
  const workers = state.workers.map((w) => ({
    worker: w.worker,
    heartbeats: w.heartbeats,
    progress_events: w.progress_events,
    stages: w.stages,
    first_ts: w.first_ts,
    last_ts: w.last_ts,
    active_seconds: round3(Math.max(w.span_ms / 1000, w.reported_ms / 1000)),
    longest_gap_seconds: round3(w.longest_gap_ms / 1000),
    stalled: w.longest_gap_ms / 1000 > stallSeconds,
  }));
  const errors = [...state.errors]
    .sort((a, b) => b.count - a.count || compareText(a.error_type, b.error_type))
    .map((e) => ({
      error_type: e.error_type,
      count: e.count,
      retryable: e.retryable.length === 1 ? (e.retryable[0] ?? null) : null,
      // Cut on a grapheme boundary: half a surrogate pair is not text.
      sample: cutText(clipItem(e.sample ?? ""), 280),
      workers: e.workers,
    }));
  return { workers: workers.slice(0, 64), errors: errors.slice(0, 32) };
}

/** A worker whose telemetry matters: it stalled, or its last stage says it is blocked. */
export function workerIsNotable(w: Telemetry["workers"][number]): boolean {
  return w.stalled || isBlockedStage(w.stages[w.stages.length - 1]);
}

function isBlockedStage(stage: string | undefined): boolean {
  return stage !== undefined && /^blocked$/i.test(stage.trim());
}

/** An error group that matters: reported more than once, or not worth retrying. */
export function errorIsNotable(
  g: Pick<Telemetry["errors"][number], "count" | "retryable">,
): boolean {
  return g.count >= 2 || g.retryable === false;
}

/**
 * Whether condensed telemetry says something worth remembering on its own: a stall, blocked
 * work, or a failure pattern. Stages walked and heartbeats counted are not news.
 */
export function telemetrySaysSomething(t: Telemetry): boolean {
  return t.workers.some(workerIsNotable) || t.errors.some(errorIsNotable);
}

/** The fact of a worker whose telemetry matters (a stall, blocked work); undefined otherwise. */
export function describeWorker(w: Telemetry["workers"][number]): string | undefined {
  if (!workerIsNotable(w)) return undefined;
  const path = w.stages.length > 0 ? `stages ${w.stages.join(" → ")}` : "no stage reported";
  const stall = w.stalled ? `; stalled ${formatDuration(w.longest_gap_seconds)}` : "";
  const blocked = isBlockedStage(w.stages[w.stages.length - 1]) ? "; blocked" : "";
  return `Worker ${w.worker}: ${path} over ${formatDuration(w.active_seconds)}${stall}${blocked}.`;
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
