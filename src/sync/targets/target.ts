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
  /** The remote id of the item with this key, if the store holds one (after a crash). */
  findByKey(type: SyncType, key: string): Promise<string | null>;
}
