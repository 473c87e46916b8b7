import type { OutgoingItem } from "../../core/sync/outgoing.js";
import type { SyncType } from "../../core/sync/policy.js";
import { EngramError } from "../../errors.js";

/**
 * What a failed call means for the engine (the seed's error list): wait and retry
 * (`rate_limited`, `unavailable`), stop this target (`auth` disables it, `schema` pauses it),
 * or skip the one item (`validation`).
 */
export type TargetErrorKind = "rate_limited" | "unavailable" | "auth" | "schema" | "validation";

export class SyncTargetError extends EngramError {
  constructor(
    message: string,
    readonly kind: TargetErrorKind,
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(message, "sync_target", options);
  }
}

export interface TargetHealth {
  healthy: boolean;
  /** Why not, in a form the engine acts on. */
  error: TargetErrorKind | null;
  message: string | null;
  latency_ms: number;
  /** Rate-limit headers the store sent, when it sends any. */
  rate_limit: { limit: number | null; remaining: number | null; reset: string | null } | null;
  /** Per collection (database): present with the expected properties, or what is wrong. */
  schema: Partial<Record<SyncType, "ok" | "missing" | string>>;
}

export interface SchemaReport {
  created: SyncType[];
  validated: SyncType[];
  /** Collection ids by item type, for the record in the state folder. */
  ids: Partial<Record<SyncType, string>>;
}

/**
 * One external store. Small on purpose: the engine decides what, when and how often; a target
 * only knows how to write one item and find it again by its key.
 */
export interface SyncTarget {
  readonly name: string;
  /** A lightweight authenticated call, its latency, rate-limit headers and each collection's schema. */
  health(): Promise<TargetHealth>;
  /** Creates what is missing (databases, properties) or validates what exists. */
  ensureSchema(): Promise<SchemaReport>;
  /** Writes the item: updates `remoteId` when given, else creates; returns the remote id. */
  upsert(item: OutgoingItem, remoteId: string | null): Promise<string>;
  /**
   * The remote id of the item with this key, if the store's queries show one (after a send
   * whose outcome is unknown). `item` is what would be sent, for a store that must know more
   * than the key to recognize it (Graphiti's episode parts).
   */
  findByKey(type: SyncType, key: string, item?: OutgoingItem): Promise<string | null>;
  /**
   * What the run must tell the user and the target has not thrown (a remote id from the queue
   * that is not this project's, left alone), emptied as it is read.
   */
  takeWarnings?(): string[];
}

/**
 * One item of a batch: what to write and the remote id it has (null: create). An item whose
 * earlier create has an unknown outcome comes only once reconciled by its key (the batch
 * sender's lookup and settle rule), so a null id here always means "create".
 */
export interface BatchEntry {
  item: OutgoingItem;
  remoteId: string | null;
}

export type BatchOutcome =
  | { key: string; ok: true; remoteId: string }
  | { key: string; ok: false; error: SyncTargetError };

/**
 * A store whose calls each carry many items (Tana's Input API: 100 nodes and 5000 characters a
 * call, one call a second). The engine asks for the plan, then sends one group at a time,
 * journalling each group's outcomes before the next call.
 */
export interface BatchSyncTarget extends SyncTarget {
  /** The entries grouped into calls within the store's limits, in sending order. */
  planBatches(entries: readonly BatchEntry[]): Promise<BatchEntry[][]>;
  /** Writes one group; one outcome per entry. Throws when the whole call failed. */
  upsertBatch(batch: readonly BatchEntry[]): Promise<BatchOutcome[]>;
}

export function isBatchTarget(target: SyncTarget): target is BatchSyncTarget {
  const t = target as Partial<BatchSyncTarget>;
  return typeof t.planBatches === "function" && typeof t.upsertBatch === "function";
}
