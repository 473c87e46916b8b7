import type { OutgoingItem } from "../core/sync/outgoing.js";
import {
  deferRecord,
  markCrashed,
  markFailed,
  markInflight,
  markSynced,
  outcomeUnknown,
  type QueueRecord,
  reconcileMiss,
  type SyncSchedule,
} from "../core/sync/queue.js";
import type { QueueStore, StoredQueue, TargetStatus } from "./queue-store.js";
import type { SyncLog } from "./sync-log.js";
import {
  type BatchEntry,
  type BatchOutcome,
  type BatchSyncTarget,
  SyncTargetError,
} from "./targets/target.js";

export interface BatchSendOptions {
  store: QueueStore;
  schedule: SyncSchedule;
  clock: () => string;
  log: SyncLog;
  /** What the store may receive for a record (privacy, sealing); throws when nothing may. */
  prepare: (record: QueueRecord) => OutgoingItem;
  /** Items written so far of all due, after each call (a terminal shows it). */
  progress?: (done: number, total: number) => void;
  notices: string[];
  sent: SentCounts;
}

/**
 * What a run did with the items due: written, failed for good (with a notice), left to retry
 * on the schedule, deferred (an unknown outcome not yet settled), and `skipped`, kept for
 * readers of the earlier shape: a failure is never counted there, it stays 0.
 */
export interface SentCounts {
  created_or_updated: number;
  failed: number;
  retry_later: number;
  deferred: number;
  skipped: number;
}

/**
 * A failure worth another try: the record backs off on the schedule (or `Retry-After`), or
 * fails for good after the last delay, which the notices say.
 */
export function retryOrFail(
  queue: StoredQueue,
  key: string,
  failure: SyncTargetError,
  run: Pick<BatchSendOptions, "schedule" | "sent" | "notices"> & { at: string },
): StoredQueue {
  const q = markFailed(
    queue,
    key,
    {
      message: failure.message,
      retryable: true,
      // A request that got no clear answer may have been carried out; a 429 was not.
      unknown: failure.kind === "unavailable",
      ...(failure.retryAfterSeconds !== undefined
        ? { retry_after_seconds: failure.retryAfterSeconds }
        : {}),
    },
    run.schedule,
    run.at,
  );
  const after = q.records[key] as QueueRecord;
  if (after.state === "failed") {
    run.sent.failed++;
    run.notices.push(
      `${key}: failed after ${after.attempts} attempts: ${failure.message}; pending again once ${failure.kind === "rate_limited" ? "the store stops limiting" : "the store is healthy"} (or director sync retry)`,
    );
  } else {
    run.sent.retry_later++;
  }
  return q;
}

/** Consecutive failed calls after which the rest of the run is left for later. */
const DOWN_AFTER = 3;
/** The longest Retry-After the next run waits out (the engine's limit). */
const MAX_HOLD_MS = 10_000;

/**
 * The engine's send step for a store that takes many items a call: every due record is
 * prepared, the target groups them into calls, and each group is marked in flight, sent, and
 * its outcomes journalled before the next call, so a crash repeats at most one call. A record
 * whose last call's outcome is unknown (a lost answer, a 5xx after the write, a kill between
 * the request and the record of its answer) is first looked up by its key, as a single send
 * is (the 60 s rule): found, it is updated in place; not found, it waits until the store's
 * queries have had `settle_seconds` since the ambiguous call, and only then is created again.
 */
export async function sendBatches(
  queue: StoredQueue,
  due: readonly string[],
  target: BatchSyncTarget,
  options: BatchSendOptions,
): Promise<StoredQueue> {
  const { store, schedule, clock, log, notices, sent } = options;
  let q = queue;
  const entries: BatchEntry[] = [];
  let failedLookups = 0;
  for (const key of due) {
    const record = q.records[key] as QueueRecord;
    let item: OutgoingItem;
    try {
      item = options.prepare(record);
    } catch (error) {
      const at = clock();
      const message = (error as Error).message;
      q = markFailed(q, key, { message, retryable: false }, schedule, at);
      store.commit(q, [key]);
      sent.failed++;
      notices.push(`${key}: not sent: ${message}`);
      log.append({ at, target: target.name, op: "send", key, ok: false, error: message });
      continue;
    }
    // An update sent again changes nothing; a create sent again may make a second node.
    if (!outcomeUnknown(record) || record.remote_id !== null) {
      entries.push({ item, remoteId: record.remote_id });
      continue;
    }
    if (failedLookups === DOWN_AFTER) {
      failedLookups++;
      notices.push(
        `${target.name}: ${DOWN_AFTER} lookups by key failed in a row; the other items of unknown outcome wait for the next run`,
      );
    }
    if (failedLookups > DOWN_AFTER) continue;
    const at = clock();
    if (record.inflight_at !== null) {
      q = markCrashed(q, key, at);
      store.commit(q, [key]);
    }
    let found: string | null;
    try {
      found = await target.findByKey(record.type, key, item);
    } catch (error) {
      // Not known either way: the record keeps its unknown outcome and is looked up again.
      const failure = asTargetError(error);
      log.append({ at, target: target.name, op: "send", key, ok: false, error: failure.message });
      q = retryOrFail(q, key, failure, { schedule, at, sent, notices });
      store.commit(q, [key]);
      failedLookups++;
      continue;
    }
    failedLookups = 0;
    if (found !== null) {
      entries.push({ item, remoteId: found });
      continue;
    }
    const miss = reconcileMiss(q, key, schedule, at);
    if (!miss.wait) {
      entries.push({ item, remoteId: null });
      continue;
    }
    q = miss.queue;
    store.commit(q, [key]);
    sent.deferred++;
    log.deferred(at, target.name, key, (q.records[key] as QueueRecord).last_error);
  }
  if (entries.length === 0) return q;
  const groups = await target.planBatches(entries);
  let done = 0;
  let failedRun = 0;
  for (const group of groups) {
    const keys = group.map((e) => e.item.key);
    const at = clock();
    for (const key of keys) q = markInflight(q, key, at);
    store.commit(q, keys);
    let outcomes: BatchOutcome[];
    try {
      outcomes = await target.upsertBatch(group);
    } catch (error) {
      const failure = asTargetError(error);
      outcomes = keys.map((key) => ({ key, ok: false, error: failure }));
    }
    const finished = clock();
    let stop = false;
    for (const outcome of outcomes) {
      const record = q.records[outcome.key] as QueueRecord;
      if (outcome.ok) {
        q = markSynced(q, outcome.key, outcome.remoteId, finished);
        sent.created_or_updated++;
        log.append({
          at: finished,
          target: target.name,
          op: "send",
          key: outcome.key,
          ok: true,
          latency_ms: Math.max(0, Date.parse(finished) - Date.parse(record.queued_at)),
        });
        continue;
      }
      const failure = outcome.error;
      log.append({
        at: finished,
        target: target.name,
        op: "send",
        key: outcome.key,
        ok: false,
        error: failure.message,
      });
      if (failure.kind === "auth" || failure.kind === "schema") {
        q = deferRecord(q, outcome.key, finished, failure.message);
        stop = true;
        const state: TargetStatus["state"] = failure.kind === "auth" ? "disabled" : "paused";
        if (q.status?.state !== state) {
          q = {
            ...q,
            status: {
              ...(q.status as TargetStatus),
              state,
              reason: failure.message,
              since: finished,
            },
          };
          notices.push(`${target.name}: ${state} (${failure.message}); other targets go on`);
        }
      } else if (failure.kind === "validation") {
        q = markFailed(
          q,
          outcome.key,
          { message: failure.message, retryable: false },
          schedule,
          finished,
        );
        sent.failed++;
        notices.push(`${outcome.key}: failed, rejected by ${target.name} (${failure.message})`);
      } else {
        q = retryOrFail(q, outcome.key, failure, { schedule, at: finished, sent, notices });
        if (failure.kind === "rate_limited") {
          stop = true;
          // As a single send: a short Retry-After binds the next run (another process) too.
          const wait = (failure.retryAfterSeconds ?? 1) * 1000;
          if (wait <= MAX_HOLD_MS && q.status) {
            q = {
              ...q,
              status: { ...q.status, hold_until: new Date(Date.now() + wait).toISOString() },
            };
          }
        }
      }
    }
    store.commit(q, keys);
    done += group.length;
    options.progress?.(done, entries.length);
    const allFailed = outcomes.every((o) => !o.ok);
    failedRun = allFailed ? failedRun + 1 : 0;
    if (stop) break;
    if (failedRun >= DOWN_AFTER) {
      notices.push(
        `${target.name}: ${failedRun} failed calls in a row; the rest waits for the next run`,
      );
      break;
    }
  }
  return q;
}

function asTargetError(error: unknown): SyncTargetError {
  return error instanceof SyncTargetError
    ? error
    : new SyncTargetError((error as Error).message, "unavailable", undefined, { cause: error });
}
