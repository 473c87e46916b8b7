import { hkdfSync } from "node:crypto";
import type { Sealed } from "../../schema/common.js";
import { sealText } from "../ingest/seal.js";
import type { SyncItem, SyncValue } from "./item.js";
import { itemKey } from "./item.js";

/** What a target receives: never more than this. */
export interface OutgoingItem {
  key: string;
  type: SyncItem["type"];
  local_id: string;
  title: string;
  fields: Readonly<Record<string, SyncValue>>;
  /** Clear content (public items) or the JSON of the sealed content (sensitive ones). */
  content: string;
  encrypted: boolean;
  content_hash: string;
}

/** Fields that describe an item without its words: the only ones a sensitive item sends. */
const NEUTRAL_FIELDS = new Set([
  "type",
  "kind",
  "confidence",
  "surprise_score",
  "outcome",
  "timestamp",
  "local_id",
  "privacy",
  "shareable",
  "evidence_count",
  "status",
  "frequency",
  "first_seen",
  "last_seen",
  "discovered",
  "last_validated",
  "generation",
]);

/**
 * The key for content sent to external stores: HKDF-SHA256 of the local seal key, so the seal
 * key itself is never used twice for different purposes and never leaves.
 */
export function deriveSyncKey(sealKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", sealKey, "engram-sync", "engram-sync/v1 content", 32));
}

export function outgoingPublic(item: SyncItem, contentHash: string): OutgoingItem {
  return {
    key: itemKey(item),
    type: item.type,
    local_id: item.local_id,
    title: item.title,
    fields: item.fields,
    content: item.content,
    encrypted: false,
    content_hash: contentHash,
  };
}

/**
 * An approved sensitive item: a neutral title, neutral fields, and the content sealed with
 * AES-256-GCM under the sync key, so the store holds ciphertext only.
 */
export function outgoingSealed(
  item: SyncItem,
  clearContent: string,
  syncKey: Uint8Array,
  contentHash: string,
): OutgoingItem {
  const fields: Record<string, SyncValue> = {};
  for (const [name, value] of Object.entries(item.fields)) {
    if (NEUTRAL_FIELDS.has(name)) fields[name] = value;
  }
  const sealed: Sealed = sealText(syncKey, `sync:${itemKey(item)}`, clearContent);
  return {
    key: itemKey(item),
    type: item.type,
    local_id: item.local_id,
    title: `Sensitive ${item.type} ${item.local_id}`,
    fields,
    content: JSON.stringify(sealed),
    encrypted: true,
    content_hash: contentHash,
  };
}
