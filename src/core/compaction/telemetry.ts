import type { EngramBody } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { clipItem, compareText, cutText, round3 } from "../model/text.js";
import { secondsBetween } from "../model/time.js";

export type Telemetry = NonNullable<EngramBody["telemetry"]>;

/** Heartbeats and progress condensed per worker (stages, durations, stalls); errors by type. */
export function condenseTelemetry(events: readonly MemoryEvent[], stallSeconds: number): Telemetry {
  const workers = new Map<string, MemoryEvent[]>();
  const errorGroups = new Map<string, MemoryEvent[]>();
  const errorIds = new Set<string>();
  for (const event of events) {
    if (event.kind === "heartbeat" || event.kind === "progress") {
      const list = workers.get(event.sender.id);
      if (list) list.push(event);
      else workers.set(event.sender.id, [event]);
    } else if (event.kind === "error") {
      // Repeated reports of one error (its upstream `error_id`) count once.
      if (event.error_id !== undefined) {
        const id = `${event.sender.id}\u0000${event.error_id}`;
        if (errorIds.has(id)) continue;
        errorIds.add(id);
      }
      const type = event.error_type ?? "unknown";
      const list = errorGroups.get(type);
      if (list) list.push(event);
      else errorGroups.set(type, [event]);
    }
  }
  // Durations and gaps come from each worker's own clock (its `sent_at` deltas): skew
  // between machines cancels out, and batch ingest (one receipt stamp for many events) does
  // not flatten them. Order is still the Director's (buffer sequence).
  const workerSummaries = [...workers.entries()]
    .sort((a, b) => compareText(a[0], b[0]))
    .map(([worker, list]) => {
      const stages: string[] = [];
      let longestGap = 0;
      let span = 0;
      let reportedMs = 0;
      let previous: string | undefined;
      for (const event of list) {
        if (event.stage !== undefined && stages[stages.length - 1] !== event.stage) {
          stages.push(event.stage);
        }
        if (event.kind === "progress" && event.duration_ms !== undefined)
          reportedMs += event.duration_ms;
        if (previous !== undefined) {
          const gap = Math.max(0, secondsBetween(previous, event.sent_at));
          longestGap = Math.max(longestGap, gap);
          span += gap;
        }
        previous = event.sent_at;
      }
      const firstTs = (list[0] as MemoryEvent).received_at;
      const lastTs = (list[list.length - 1] as MemoryEvent).received_at;
      return {
        worker,
        heartbeats: list.filter((e) => e.kind === "heartbeat").length,
        progress_events: list.filter((e) => e.kind === "progress").length,
        stages: stages.slice(-16),
        first_ts: firstTs,
        last_ts: lastTs,
        active_seconds: round3(Math.max(span, reportedMs / 1000)),
        longest_gap_seconds: round3(longestGap),
        stalled: longestGap > stallSeconds,
      };
    });
  const errors = [...errorGroups.entries()]
    .sort((a, b) => b[1].length - a[1].length || compareText(a[0], b[0]))
    .map(([errorType, list]) => {
      const retryValues = new Set(list.map((e) => e.retryable));
      const retryable =
        retryValues.size === 1 && !retryValues.has(undefined)
          ? (list[0]?.retryable as boolean)
          : null;
      const sampleEvent = list.find((e) => e.text !== undefined);
      return {
        error_type: errorType,
        count: list.length,
        retryable,
        // Cut on a grapheme boundary: half a surrogate pair is not text.
        sample: cutText(
          clipItem(sampleEvent?.text ?? (sampleEvent?.sealed ? "(sensitive, sealed)" : "")),
          280,
        ),
        workers: [...new Set(list.map((e) => e.sender.id))].sort().slice(0, 32),
      };
    });
  return { workers: workerSummaries.slice(0, 64), errors: errors.slice(0, 32) };
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
