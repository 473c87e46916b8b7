/** The part of a sync log line the metrics read. */
export interface MetricEntry {
  op: string;
  target: string;
  ok?: boolean;
  /** Set when the operation failed (a remote recall that got no answer at all). */
  error?: string;
  latency_ms?: number;
  surprise?: boolean;
}

export interface SyncMetrics {
  sends: number;
  /** Share of send attempts that succeeded; null before the first. */
  success_rate: number | null;
  /** Share of synced episodes that were surprises (the seed's target: above 60%). */
  surprise_sync_rate: number | null;
  /**
   * Share of remote recalls that found something; null before the first. A recall the store
   * did not answer (down) is an outage, not a miss: it is left out.
   */
  extension_hit_rate: number | null;
  /** Mean time from trigger (queued) to completion, on the Director's clock. */
  average_latency_ms: number | null;
  /** Share of health checks that found the target healthy. */
  uptime: number | null;
}

const ratio = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 1000) / 1000);

/** The seed's metrics for one target, from its log and its health counts. */
export function syncMetrics(
  entries: readonly MetricEntry[],
  target: string,
  checks: { checks: number; healthy_checks: number } | null,
): SyncMetrics {
  let sends = 0;
  let ok = 0;
  let episodes = 0;
  let surprises = 0;
  let latency = 0;
  let recalls = 0;
  let hits = 0;
  for (const e of entries) {
    if (e.target !== target) continue;
    if (e.op === "recall" && e.error === undefined) {
      recalls++;
      if (e.ok) hits++;
    }
    if (e.op !== "send") continue;
    sends++;
    if (!e.ok) continue;
    ok++;
    latency += e.latency_ms ?? 0;
    if (e.surprise !== undefined) {
      episodes++;
      if (e.surprise) surprises++;
    }
  }
  return {
    sends,
    success_rate: ratio(ok, sends),
    surprise_sync_rate: ratio(surprises, episodes),
    extension_hit_rate: ratio(hits, recalls),
    average_latency_ms: ok === 0 ? null : Math.round(latency / ok),
    uptime: checks === null ? null : ratio(checks.healthy_checks, checks.checks),
  };
}
