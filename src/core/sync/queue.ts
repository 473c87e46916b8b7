import type { Privacy } from "../../schema/common.js";
import type { SyncCandidate, SyncItem } from "./item.js";
import { itemHash, itemKey } from "./item.js";
import type { SyncPriority, SyncType } from "./policy.js";
import { type Approval, privacyGate } from "./privacy.js";

/**
 * The sync queue of one target, as plain data. Every function here is pure and takes `now`
 * (ISO UTC) as input; the engine persists the result atomically after each step.
 */
export type QueueState = "pending" | "failed" | "synced";

export interface QueueRecord {
  key: string;
  type: SyncType;
  local_id: string;
  /** Digest of the item as queued; a new digest for the same key is an update. */
  content_hash: string;
  state: QueueState;
  priority: SyncPriority;
  privacy: Privacy;
  approval: Approval;
  attempts: number;
  /** When the item entered the queue (for latency: trigger to completion). */
  queued_at: string;
  occurred_at: string;
  /** Not before this time (retry back-off or Retry-After). */
  next_at: string | null;
  /** Set just before a send: a record that still has it after a crash is looked up first. */
  inflight_at: string | null;
  /**
   * A send whose outcome is unknown (a timeout, a 5xx, a cut connection, a crash between the
   * request and the record of its answer) was last seen at this time: the item is looked up by
   * its key before any new send, and not created again until `settle_seconds` later.
   * Absent in queues written before it existed.
   */
  unknown_since?: string | null;
  /** Why a `failed` record failed: transient ones go back to pending once the store is healthy. */
  failure?: "transient" | "permanent" | null;
  last_attempt_at: string | null;
  last_error: string | null;
  synced_at: string | null;
  remote_id: string | null;
  /** Whether the queued item was a surprise (episodes), for the surprise sync rate. */
  surprise: boolean;
  reasons: string[];
  item: SyncItem;
}

/** The bidirectional id map: local key to remote id and back, kept after the record goes. */
export interface MappingEntry {
  remote_id: string;
  content_hash: string;
  synced_at: string;
}

export interface SyncSchedule {
  batch_interval_seconds: number;
  retry_delays_seconds: readonly number[];
  synced_retention_days: number;
  failed_retention_days: number;
  /**
   * How long a store may take to show a new item in its queries: a create whose outcome is
   * unknown is created again only when a lookup this long after it still finds nothing.
   */
  settle_seconds?: number;
}

/** Notion's and Graphiti's queries catch up within seconds; the first retry waits a minute anyway. */
export const DEFAULT_SETTLE_SECONDS = 60;

export const DEFAULT_SCHEDULE: SyncSchedule = {
  batch_interval_seconds: 300,
  retry_delays_seconds: [60, 300, 1800],
  synced_retention_days: 7,
  failed_retention_days: 30,
  settle_seconds: DEFAULT_SETTLE_SECONDS,
};

const settleOf = (schedule: SyncSchedule) => schedule.settle_seconds ?? DEFAULT_SETTLE_SECONDS;

export interface TargetQueue {
  records: Record<string, QueueRecord>;
  mapping: Record<string, MappingEntry>;
  /** Keys approved or rejected for sensitive items, kept across re-queues. */
  approvals: Record<string, Approval>;
  last_batch_at: string | null;
}

export function emptyQueue(): TargetQueue {
  return { records: {}, mapping: {}, approvals: {}, last_batch_at: null };
}

const ms = (iso: string) => Date.parse(iso);
const plusSeconds = (iso: string, s: number) => new Date(ms(iso) + s * 1000).toISOString();

export interface EnqueueResult<Q extends TargetQueue = TargetQueue> {
  queue: Q;
  added: string[];
  updated: string[];
  /** Private items: seen and never queued. */
  private: number;
}

/**
 * Puts the candidates the policy (or an explicit request) accepts into the queue. An item
 * already synced with the same content is left alone; one with new content goes back to
 * pending (an update of the same remote page). Private items never enter the queue.
 */
export function enqueue<Q extends TargetQueue>(
  queue: Q,
  candidates: readonly SyncCandidate[],
  now: string,
): EnqueueResult<Q> {
  const records = { ...queue.records };
  const added: string[] = [];
  const updated: string[] = [];
  let privateCount = 0;
  for (const { item, verdict } of candidates) {
    if (!verdict.sync || verdict.priority === null) continue;
    if (item.privacy === "private") {
      privateCount++;
      continue;
    }
    const key = itemKey(item);
    const hash = itemHash(item);
    const existing = records[key];
    if (existing?.content_hash === hash) continue;
    if (existing === undefined && queue.mapping[key]?.content_hash === hash) continue;
    const mapped = queue.mapping[key];
    records[key] = {
      key,
      type: item.type,
      local_id: item.local_id,
      content_hash: hash,
      state: "pending",
      priority: verdict.priority,
      privacy: item.privacy,
      approval: queue.approvals[key] ?? "none",
      attempts: 0,
      queued_at: now,
      occurred_at: item.occurred_at,
      next_at: null,
      inflight_at: existing?.inflight_at ?? null,
      // A new version of an item whose create is unknown must still be looked up first.
      unknown_since: existing?.unknown_since ?? null,
      failure: null,
      last_attempt_at: null,
      last_error: null,
      synced_at: null,
      remote_id: existing?.remote_id ?? mapped?.remote_id ?? null,
      surprise: verdict.reasons.includes("high surprise"),
      reasons: verdict.reasons,
      item,
    };
    (existing || mapped ? updated : added).push(key);
  }
  return { queue: { ...queue, records }, added, updated, private: privateCount };
}

export interface DuePlan {
  /** Keys to send now, priority 1 first, then oldest queued first. */
  due: string[];
  /** Whether priority 2 items are part of this run (a batch is due). */
  batch: boolean;
  /** Sensitive items waiting for `sync approve`. */
  awaiting_approval: string[];
}

/**
 * What is due at `now`: priority 1 at once, priority 2 when the batch interval has passed
 * since the last batch (or `force`), and nothing before its `next_at`.
 */
export function planDue(
  queue: TargetQueue,
  schedule: SyncSchedule,
  now: string,
  force = false,
): DuePlan {
  const batch =
    force ||
    queue.last_batch_at === null ||
    ms(now) - ms(queue.last_batch_at) >= schedule.batch_interval_seconds * 1000;
  const due: QueueRecord[] = [];
  const awaiting: string[] = [];
  for (const record of Object.values(queue.records)) {
    if (record.state !== "pending") continue;
    const gate = privacyGate(record.privacy, record.approval);
    if (!gate.allowed) {
      if (gate.reason === "awaiting_approval") awaiting.push(record.key);
      continue;
    }
    if (record.next_at !== null && ms(record.next_at) > ms(now)) continue;
    if (record.priority === 2 && !batch) continue;
    due.push(record);
  }
  due.sort(
    (a, b) =>
      a.priority - b.priority ||
      ms(a.queued_at) - ms(b.queued_at) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  return { due: due.map((r) => r.key), batch, awaiting_approval: awaiting.sort() };
}

function patch<Q extends TargetQueue>(queue: Q, key: string, change: Partial<QueueRecord>): Q {
  const record = queue.records[key];
  if (record === undefined) throw new RangeError(`sync queue: no record ${key}`);
  return { ...queue, records: { ...queue.records, [key]: { ...record, ...change } } };
}

/** Marks a send as started, so a crash before its outcome is recorded is looked up on resume. */
export function markInflight<Q extends TargetQueue>(queue: Q, key: string, now: string): Q {
  return patch(queue, key, { inflight_at: now, last_attempt_at: now });
}

export function markSynced<Q extends TargetQueue>(
  queue: Q,
  key: string,
  remoteId: string,
  now: string,
): Q {
  const record = queue.records[key];
  if (record === undefined) throw new RangeError(`sync queue: no record ${key}`);
  const next = patch(queue, key, {
    state: "synced",
    attempts: record.attempts + 1,
    inflight_at: null,
    unknown_since: null,
    failure: null,
    next_at: null,
    last_error: null,
    synced_at: now,
    remote_id: remoteId,
  });
  return {
    ...next,
    mapping: {
      ...next.mapping,
      [key]: { remote_id: remoteId, content_hash: record.content_hash, synced_at: now },
    },
  };
}

/**
 * A failed send. Retryable failures wait 1, 5, then 30 minutes (or `Retry-After`, if later);
 * after the last delay the record is `failed` as `transient` (it goes back to pending once the
 * store is healthy again, see `requeueTransient`); a non-retryable one is `failed` at once, as
 * `permanent` (`director sync retry`). `unknown`: the store may have carried the send out
 * (timeout, 5xx, cut connection), so the item is looked up by its key before any new send.
 */
export function markFailed<Q extends TargetQueue>(
  queue: Q,
  key: string,
  error: { message: string; retryable: boolean; retry_after_seconds?: number; unknown?: boolean },
  schedule: SyncSchedule,
  now: string,
): Q {
  const record = queue.records[key];
  if (record === undefined) throw new RangeError(`sync queue: no record ${key}`);
  const attempts = record.attempts + 1;
  const delay = schedule.retry_delays_seconds[attempts - 1];
  const unknown_since = error.unknown === true ? now : (record.unknown_since ?? null);
  if (!error.retryable || delay === undefined) {
    return patch(queue, key, {
      state: "failed",
      failure: error.retryable ? "transient" : "permanent",
      attempts,
      inflight_at: null,
      unknown_since,
      next_at: null,
      last_error: error.message,
    });
  }
  const wait = Math.max(
    delay,
    error.retry_after_seconds ?? 0,
    error.unknown === true ? settleOf(schedule) : 0,
  );
  return patch(queue, key, {
    attempts,
    inflight_at: null,
    unknown_since,
    next_at: plusSeconds(now, wait),
    last_error: error.message,
  });
}

/** Whether the record's last send may have reached the store: look it up before sending. */
export function outcomeUnknown(record: QueueRecord): boolean {
  return record.inflight_at !== null || (record.unknown_since ?? null) !== null;
}

/**
 * A record found still in flight (its process died between the request and the record of its
 * answer): its outcome is unknown from `now` on (the write, if any, happened before this run),
 * kept even if the lookup that follows fails.
 */
export function markCrashed<Q extends TargetQueue>(queue: Q, key: string, now: string): Q {
  const record = queue.records[key];
  if (record === undefined) throw new RangeError(`sync queue: no record ${key}`);
  if (record.inflight_at === null) return queue;
  return patch(queue, key, { inflight_at: null, unknown_since: now });
}

/**
 * A lookup by key found nothing for a record whose last send's outcome is unknown. A store's
 * queries may lag behind its writes, so "not found" is believed only `settle_seconds` after
 * the outcome became unknown: before that the record waits (`wait`), counted from the failure
 * seen, or from `now` for a send cut by a crash (it happened before this run, at an unknown
 * moment). After that, the send goes ahead.
 */
export function reconcileMiss<Q extends TargetQueue>(
  queue: Q,
  key: string,
  schedule: SyncSchedule,
  now: string,
): { queue: Q; wait: boolean } {
  const record = queue.records[key];
  if (record === undefined) throw new RangeError(`sync queue: no record ${key}`);
  const since = record.inflight_at !== null ? now : (record.unknown_since ?? null);
  if (since === null || ms(now) - ms(since) >= settleOf(schedule) * 1000) {
    return { queue, wait: false };
  }
  const until = plusSeconds(since, settleOf(schedule));
  return {
    queue: patch(queue, key, {
      inflight_at: null,
      unknown_since: since,
      next_at: until,
      last_error: `outcome of the last send unknown and not found by its key yet; looked up again from ${until}`,
    }),
    wait: true,
  };
}

/**
 * Records that failed only for transient reasons go back to pending (their attempts reset)
 * once the store is healthy again; an unknown outcome stays recorded, so they are looked up first.
 */
export function requeueTransient<Q extends TargetQueue>(queue: Q): { queue: Q; keys: string[] } {
  let q = queue;
  const keys: string[] = [];
  for (const record of Object.values(queue.records)) {
    if (record.state !== "failed" || record.failure !== "transient") continue;
    q = requeue(q, record.key);
    keys.push(record.key);
  }
  return { queue: q, keys: keys.sort() };
}

/** Holds a record back without charging an attempt (the target paused or was rate limited). */
export function deferRecord<Q extends TargetQueue>(
  queue: Q,
  key: string,
  until: string,
  reason: string,
): Q {
  return patch(queue, key, { next_at: until, last_error: reason, inflight_at: null });
}

/** Records an approval or rejection; it survives re-queues of the same key. */
export function setApproval<Q extends TargetQueue>(queue: Q, key: string, approval: Approval): Q {
  const records = { ...queue.records };
  const record = records[key];
  if (record !== undefined) records[key] = { ...record, approval };
  return { ...queue, records, approvals: { ...queue.approvals, [key]: approval } };
}

/** Puts a failed record back to pending, its attempts reset (an explicit retry). */
export function requeue<Q extends TargetQueue>(queue: Q, key: string): Q {
  return patch(queue, key, {
    state: "pending",
    failure: null,
    attempts: 0,
    next_at: null,
    last_error: null,
  });
}

export interface RetentionResult<Q extends TargetQueue = TargetQueue> {
  queue: Q;
  removed: string[];
  archived: QueueRecord[];
}

/**
 * Synced records older than `synced_retention_days` leave the queue (their mapping stays, so
 * the item is not sent again); failed ones older than `failed_retention_days` are archived.
 */
export function applyRetention<Q extends TargetQueue>(
  queue: Q,
  schedule: SyncSchedule,
  now: string,
): RetentionResult<Q> {
  const day = 86_400_000;
  const records: Record<string, QueueRecord> = {};
  const removed: string[] = [];
  const archived: QueueRecord[] = [];
  for (const [key, record] of Object.entries(queue.records)) {
    const age = (at: string | null) => ms(now) - ms(at ?? record.queued_at);
    if (record.state === "synced" && age(record.synced_at) > schedule.synced_retention_days * day) {
      removed.push(key);
    } else if (
      record.state === "failed" &&
      age(record.last_attempt_at) > schedule.failed_retention_days * day
    ) {
      archived.push(record);
    } else {
      records[key] = record;
    }
  }
  return { queue: { ...queue, records }, removed, archived };
}

export interface QueueDepth {
  pending: number;
  failed: number;
  synced: number;
  awaiting_approval: number;
}

export function queueDepth(queue: TargetQueue): QueueDepth {
  const depth: QueueDepth = { pending: 0, failed: 0, synced: 0, awaiting_approval: 0 };
  for (const record of Object.values(queue.records)) {
    depth[record.state]++;
    if (record.state === "pending" && !privacyGate(record.privacy, record.approval).allowed) {
      depth.awaiting_approval++;
    }
  }
  return depth;
}

/**
 * Forgets what was sent for these keys (`sync run --all`): their next enqueue counts as a
 * change, while the remote ids stay, so the store replaces its copy instead of adding one.
 */
export function forgetSent<Q extends TargetQueue>(queue: Q, keys: Iterable<string>): Q {
  const records = { ...queue.records };
  const mapping = { ...queue.mapping };
  for (const key of keys) {
    const record = records[key];
    if (record !== undefined) records[key] = { ...record, content_hash: "" };
    const mapped = mapping[key];
    if (mapped !== undefined) mapping[key] = { ...mapped, content_hash: "" };
  }
  return { ...queue, records, mapping };
}
