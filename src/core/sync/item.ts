import type { Privacy, Sealed } from "../../schema/common.js";
import { canonicalJson, sha256Hex } from "../model/canonical.js";
import type { SyncType, SyncVerdict } from "./policy.js";

/** A property value a store can hold: text, number, flag, list of labels, or nothing. */
export type SyncValue = string | number | boolean | readonly string[] | null;

/**
 * One thing to send to an external store, store-agnostic: a title, typed fields (the store
 * maps them to its own properties) and the content as markdown-ish text.
 */
export interface SyncItem {
  type: SyncType;
  /** Stable local identity: the same episode, insight, pattern or version keeps it. */
  local_id: string;
  title: string;
  privacy: Privacy;
  /** When the item came to be (an event's receipt time, a catalog's created_at). */
  occurred_at: string;
  fields: Readonly<Record<string, SyncValue>>;
  content: string;
  /** Content that is already sealed locally (a sensitive note); opened only to re-seal. */
  sealed_content?: Sealed[];
}

/** An item with the policy's verdict. */
export interface SyncCandidate {
  item: SyncItem;
  verdict: SyncVerdict;
}

/** The queue's key of an item: its type and local id. It names the remote page for good. */
export function itemKey(item: Pick<SyncItem, "type" | "local_id">): string {
  return `${item.type}:${item.local_id}`;
}

/**
 * The content half of the stable key: a digest of everything that is sent. The same key with
 * another hash is an update of the remote page, never a second page.
 */
export function itemHash(item: SyncItem): string {
  return `sha256:${sha256Hex(canonicalJson(item))}`;
}
