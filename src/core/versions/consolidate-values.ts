/**
 * The values of a consolidation: what makes two items the same (their keys and ids) and how
 * a core value merges. consolidate.ts applies the rules with them.
 */
import type { Privacy, Sealed } from "../../schema/common.js";
import { normalizeClaim } from "../graph/learnings.js";
import { isPrivacy, strictestPrivacy } from "../ingest/event-keys.js";
import { canonicalJson, sha256Hex } from "../model/canonical.js";
import type { SessionItem } from "./items.js";

/** What makes two pieces of knowledge the same: normalized text, or equal sealed bytes. */
export function knowledgeKey(text: string | undefined, sealed: readonly Sealed[] | undefined) {
  if (text !== undefined) return textKey(text);
  return `s:${(sealed ?? []).map((s) => s.ct).join(",")}`;
}

// Each step keys all the knowledge memory holds, nearly all of it keyed by the step before:
// a run of many sessions would normalize the same texts again and again.
const textKeys = new Map<string, string>();
const TEXT_KEYS_MAX = 65_536;

function textKey(text: string): string {
  let key = textKeys.get(text);
  if (key === undefined) {
    if (textKeys.size >= TEXT_KEYS_MAX) textKeys.clear();
    key = `t:${normalizeClaim(text)}`;
    textKeys.set(text, key);
  }
  return key;
}

/** An episode's permanent id: derived from its content, so a replayed session adds nothing. */
export function episodeId(sessionId: string, item: SessionItem): string {
  const content = {
    session_id: sessionId,
    seq: item.seq,
    outcome: item.outcome,
    confidence: item.confidence,
    text: item.text,
    sealed: item.sealed,
  };
  return `ep_${sha256Hex(canonicalJson(content)).slice(0, 16)}`;
}

/**
 * The privacy a session's item states for a new knowledge record; absent (the notes' default)
 * and private are returned as undefined, so records written without `--privacy` keep the
 * bytes they had before the field existed. A value no reader knows is private.
 */
export function statedPrivacy(stated: string | undefined): Privacy | undefined {
  const privacy = isPrivacy(stated) ? stated : "private";
  return privacy === "private" ? undefined : privacy;
}

/**
 * A record's privacy once a session restates it: the strictest of the two, so a restatement
 * can make a record more private, never less (undefined: private, as in `statedPrivacy`).
 */
export function mergedPrivacy(
  existing: Privacy | undefined,
  stated: string | undefined,
): Privacy | undefined {
  const privacy = strictestPrivacy(existing ?? "private", statedPrivacy(stated) ?? "private");
  return privacy === "private" ? undefined : privacy;
}

export function knowledgeId(key: string): string {
  return `k_${sha256Hex(key).slice(0, 16)}`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * careful_merge of one value: objects merge key by key (a key the change leaves out is kept),
 * anything else is replaced. Nothing is deleted: a null anywhere in the change is refused.
 */
export function mergeCoreValue(old: unknown, change: unknown): unknown {
  if (isPlainObject(old) && isPlainObject(change)) {
    const out: Record<string, unknown> = { ...old };
    for (const [k, v] of Object.entries(change)) out[k] = mergeCoreValue(old[k], v);
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
  }
  return change;
}

export function containsNull(v: unknown): boolean {
  if (v === null) return true;
  if (Array.isArray(v)) return v.some(containsNull);
  if (isPlainObject(v)) return Object.values(v).some(containsNull);
  return false;
}
