import { openSealed } from "../core/ingest/seal.js";
import type { SyncCandidate } from "../core/sync/item.js";
import {
  deriveSyncKey,
  type OutgoingItem,
  outgoingPublic,
  outgoingSealed,
} from "../core/sync/outgoing.js";
import { privacyGate } from "../core/sync/privacy.js";
import {
  applyRetention,
  deferRecord,
  enqueue,
  markCrashed,
  markFailed,
  markInflight,
  markSynced,
  outcomeUnknown,
  planDue,
  type QueueDepth,
  type QueueRecord,
  queueDepth,
  reconcileMiss,
  requeueTransient,
  type SyncSchedule,
} from "../core/sync/queue.js";
import { retryOrFail, type SentCounts, sendBatches } from "./batch-send.js";
import type { QueueStore, StoredQueue, TargetStatus } from "./queue-store.js";
import type { SyncLog, SyncLogEntry } from "./sync-log.js";
import {
  isBatchTarget,
  type SyncTarget,
  SyncTargetError,
  type TargetHealth,
} from "./targets/target.js";

export interface EngineOptions {
  store: QueueStore;
  target: SyncTarget;
  schedule: SyncSchedule;
  /** The Director's clock (`SOURCE_DATE_EPOCH` when set). */
  clock: () => string;
  log: SyncLog;
  /** The local seal key, for sensitive items (opened and re-sealed for the store). */
  sealKey: () => Uint8Array | undefined;
  /** Send priority 2 items now, whatever the batch interval says. */
  force?: boolean;
  /** Send only these keys (`sync --id`). */
  only?: ReadonlySet<string>;
  /**
   * What the candidates were read from (the catalog hash): when the queue last read the same,
   * memory has nothing new and the candidates are not built at all.
   */
  sourceHash?: string;
  /** Items written so far of those due, for a store that sends many a call (a terminal shows it). */
  progress?: (done: number, total: number) => void;
}

/** Candidates, or a way to build them only when needed. */
export type CandidateSource =
  | readonly SyncCandidate[]
  | ((queue: StoredQueue) => Promise<readonly SyncCandidate[]>);

export interface SyncRunResult {
  target: string;
  mode: "online" | "local-only";
  health: TargetHealth;
  queued: { added: number; updated: number; private: number };
  sent: SentCounts;
  retention: { removed: number; archived: number };
  awaiting_approval: string[];
  depth: QueueDepth;
  status: TargetStatus;
  /** What the user must not miss: local-only mode, a paused or disabled target, alerts. */
  notices: string[];
}

/** Consecutive unavailable answers after which the rest of the run is left for later. */
const DOWN_AFTER = 3;

/**
 * One sync run for one target: queue what the policy accepts, apply retention, check health,
 * then send what is due in priority order. Every state change is journalled (fsync) before the
 * next request, and a send is marked in flight before it starts. A send whose outcome is
 * unknown (in flight at a crash, a timeout, a 5xx, a cut connection) is looked up by its key
 * before anything is sent again; a miss is believed only once the store's queries have had
 * `settle_seconds` to catch up, so a store that lags behind its writes gets no second copy.
 */
export async function runSync(
  source: CandidateSource,
  options: EngineOptions,
): Promise<SyncRunResult> {
  const { store, target, schedule, clock, log } = options;
  const now = clock();
  const notices: string[] = [];
  let q: StoredQueue = store.load();

  const unchanged =
    typeof source === "function" &&
    options.sourceHash !== undefined &&
    q.source_hash === options.sourceHash;
  const candidates = unchanged ? [] : typeof source === "function" ? await source(q) : source;
  const queued = enqueue(q, candidates, now);
  const previousSource = q.source_hash;
  q = { ...queued.queue, source_hash: options.sourceHash ?? q.source_hash };
  const changed = [...queued.added, ...queued.updated];
  if (changed.length > 0 || q.source_hash !== previousSource) store.commit(q, changed);
  log.append(changed.map((key) => ({ at: now, target: target.name, op: "enqueue" as const, key })));

  const kept = applyRetention(q, schedule, now);
  if (kept.removed.length > 0 || kept.archived.length > 0) {
    store.archive(kept.archived);
    q = { ...kept.queue };
    store.commit(q, [], [...kept.removed, ...kept.archived.map((r) => r.key)]);
    log.append({
      at: now,
      target: target.name,
      op: "retention",
      detail: { removed: kept.removed.length, archived: kept.archived.length },
    });
  }

  // A Retry-After the store gave an earlier run (another process) is honoured first.
  const holdMs = Date.parse(q.status?.hold_until ?? "") - Date.now();
  if (holdMs > 0 && holdMs <= MAX_HOLD_MS) await sleep(holdMs);
  const health =
    holdMs > MAX_HOLD_MS
      ? rateLimitedHealth(q.status?.hold_until as string)
      : await target.health();
  const wasDown = q.status !== null && q.status.state !== "active";
  let status = nextStatus(q.status, health, now);
  q = { ...q, status };
  store.commit(q, []);
  log.append({
    at: now,
    target: target.name,
    op: "health",
    ok: health.healthy,
    ...(health.message ? { error: health.message } : {}),
    detail: { latency_ms: health.latency_ms, state: status.state },
  });
  const result = (mode: SyncRunResult["mode"], sent: SyncRunResult["sent"]): SyncRunResult => {
    store.maybeCompact(q);
    notices.push(...(target.takeWarnings?.() ?? []));
    const depth = queueDepth(q);
    if (depth.awaiting_approval > 0) {
      notices.push(
        `${depth.awaiting_approval} sensitive item(s) wait for approval: director sync pending --json`,
      );
    }
    return {
      target: target.name,
      mode,
      health,
      queued: {
        added: queued.added.length,
        updated: queued.updated.length,
        private: queued.private,
      },
      sent,
      retention: { removed: kept.removed.length, archived: kept.archived.length },
      awaiting_approval: planDue(q, schedule, now).awaiting_approval,
      depth,
      status: q.status as TargetStatus,
      notices,
    };
  };
  const sent: SentCounts = {
    created_or_updated: 0,
    failed: 0,
    retry_later: 0,
    deferred: 0,
    skipped: 0,
  };
  if (!health.healthy) {
    notices.push(
      `${target.name}: ${describeState(status)}; local-only mode, ${queueDepth(q).pending} item(s) stay queued`,
    );
    return result("local-only", sent);
  }
  if (wasDown) notices.push(`${target.name}: healthy again; sending the queue in priority order`);
  const back = requeueTransient(q);
  if (back.keys.length > 0) {
    q = back.queue;
    store.commit(q, back.keys);
    notices.push(
      `${target.name}: ${back.keys.length} item(s) that failed for transient reasons are pending again`,
    );
  }

  const plan = planDue(q, schedule, now, options.force === true || options.only !== undefined);
  const due = options.only ? plan.due.filter((k) => options.only?.has(k)) : plan.due;
  if (isBatchTarget(target)) {
    q = await sendBatches(q, due, target, {
      ...options,
      prepare: (record) => prepare(record, options.sealKey),
      notices,
      sent,
    });
  }
  let unavailableRun = 0;
  for (const key of isBatchTarget(target) ? [] : due) {
    const record = q.records[key] as QueueRecord;
    const at = clock();
    let outgoing: OutgoingItem;
    try {
      outgoing = prepare(record, options.sealKey);
    } catch (error) {
      q = markFailed(q, key, { message: (error as Error).message, retryable: false }, schedule, at);
      store.commit(q, [key]);
      sent.failed++;
      notices.push(`${key}: not sent: ${(error as Error).message}`);
      log.append({
        at,
        target: target.name,
        op: "send",
        key,
        ok: false,
        error: (error as Error).message,
      });
      continue;
    }
    try {
      let remote = record.remote_id;
      if (outcomeUnknown(record)) {
        if (record.inflight_at !== null) {
          q = markCrashed(q, key, at);
          store.commit(q, [key]);
        }
        // Reconcile by the sync key before any new send: the last one may have been written.
        const found = await target.findByKey(record.type, key, outgoing);
        if (found === null) {
          const miss = reconcileMiss(q, key, schedule, at);
          if (miss.wait) {
            q = miss.queue;
            store.commit(q, [key]);
            sent.deferred++;
            log.deferred(at, target.name, key, (q.records[key] as QueueRecord).last_error);
            continue;
          }
        }
        remote = record.remote_id ?? found;
      }
      q = markInflight(q, key, at);
      store.commit(q, [key]);
      const id = await target.upsert(outgoing, remote);
      const done = clock();
      q = markSynced(q, key, id, done);
      store.commit(q, [key]);
      sent.created_or_updated++;
      unavailableRun = 0;
      log.append({
        at: done,
        target: target.name,
        op: "send",
        key,
        ok: true,
        latency_ms: Math.max(0, Date.parse(done) - Date.parse(record.queued_at)),
        ...(record.type === "episode" ? { surprise: record.surprise } : {}),
      });
    } catch (error) {
      const failure =
        error instanceof SyncTargetError
          ? error
          : new SyncTargetError((error as Error).message, "unavailable", undefined, {
              cause: error,
            });
      const failedAt = clock();
      const entry: SyncLogEntry = {
        at: failedAt,
        target: target.name,
        op: "send",
        key,
        ok: false,
        error: failure.message,
      };
      log.append(entry);
      if (failure.kind === "auth" || failure.kind === "schema") {
        q = deferRecord(q, key, failedAt, failure.message);
        status = {
          ...status,
          state: failure.kind === "auth" ? "disabled" : "paused",
          reason: failure.message,
          since: failedAt,
        };
        q = { ...q, status };
        store.commit(q, [key]);
        notices.push(`${target.name}: ${describeState(status)}; other targets go on`);
        break;
      }
      if (failure.kind === "validation") {
        q = markFailed(q, key, { message: failure.message, retryable: false }, schedule, failedAt);
        store.commit(q, [key]);
        sent.failed++;
        notices.push(
          `${key}: failed, rejected by ${target.name} (${failure.message}); after fixing it: director sync retry --id ${record.local_id}`,
        );
        continue;
      }
      q = retryOrFail(q, key, failure, { schedule, at: failedAt, sent, notices });
      // Rate limited: the store asked us to wait, so the rest waits too, this run and the next.
      if (failure.kind === "rate_limited") {
        // A short Retry-After binds the next run too (another process, maybe seconds later);
        // a longer one is kept by the item's next_at on the Director's clock.
        const wait = (failure.retryAfterSeconds ?? 1) * 1000;
        if (wait <= MAX_HOLD_MS) {
          status = { ...status, hold_until: new Date(Date.now() + wait).toISOString() };
          q = { ...q, status };
        }
        store.commit(q, [key]);
        break;
      }
      store.commit(q, [key]);
      unavailableRun++;
      if (unavailableRun >= DOWN_AFTER) {
        notices.push(
          `${target.name}: ${unavailableRun} failures in a row; the rest waits for the next run`,
        );
        break;
      }
    }
  }
  if (plan.batch && due.length > 0) {
    q = { ...q, last_batch_at: now };
    store.commit(q, []);
  }
  return result("online", sent);
}

/** The longest Retry-After a run waits out before its health check; longer is local-only. */
const MAX_HOLD_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rateLimitedHealth(until: string): TargetHealth {
  return {
    healthy: false,
    error: "rate_limited",
    message: `rate limited: the store asked for nothing before ${until}`,
    latency_ms: 0,
    rate_limit: null,
    schema: {},
  };
}

/** What the store receives for this record: privacy decides, sensitive content is sealed. */
function prepare(record: QueueRecord, sealKey: () => Uint8Array | undefined): OutgoingItem {
  const gate = privacyGate(record.privacy, record.approval);
  if (!gate.allowed) throw new Error(`privacy ${record.privacy} (${gate.reason}) may not leave`);
  if (!gate.encrypt) return outgoingPublic(record.item, record.content_hash);
  const key = sealKey();
  if (key === undefined) throw new Error("no local seal key to encrypt a sensitive item with");
  const clear =
    record.item.sealed_content !== undefined
      ? record.item.sealed_content.map((s) => openSealed(key, s)).join("\n\n")
      : record.item.content;
  return outgoingSealed(record.item, clear, deriveSyncKey(key), record.content_hash);
}

function nextStatus(
  previous: TargetStatus | null,
  health: TargetHealth,
  now: string,
): TargetStatus {
  const state: TargetStatus["state"] = health.healthy
    ? "active"
    : health.error === "auth"
      ? "disabled"
      : health.error === "schema"
        ? "paused"
        : "unreachable";
  const same = previous?.state === state;
  return {
    state,
    reason: health.healthy ? null : health.message,
    since: same && previous ? previous.since : now,
    checks: (previous?.checks ?? 0) + 1,
    healthy_checks: (previous?.healthy_checks ?? 0) + (health.healthy ? 1 : 0),
    last_check_at: now,
    last_latency_ms: health.latency_ms,
    hold_until: health.error === "rate_limited" ? (previous?.hold_until ?? null) : null,
  };
}

function describeState(status: TargetStatus): string {
  switch (status.state) {
    case "disabled":
      return `disabled: authentication failed (${status.reason}); fix the token, the next run re-enables it`;
    case "paused":
      return `paused: schema mismatch (${status.reason}); run director sync init to repair, the next run resumes`;
    case "unreachable":
      return `unreachable (${status.reason})`;
    default:
      return "active";
  }
}
