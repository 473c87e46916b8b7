import { DOCUMENT_KEY_RE, SESSION_ITEM_KINDS } from "../core/versions/items.js";
import { envelopeHeadOk, eventOk, noteOk } from "../schema/envelope-fast.js";
import { isCount, isObject } from "../schema/formats.js";
import { OUTCOMES } from "../schema/note-kinds.js";

/**
 * Whether an envelope a worker built is certainly one the zod schemas accept (envelope and
 * payload), checked by hand: `worker emit`, `worker recall` and `worker session end` then
 * never load zod. Only the payloads workers send from the command line are known here
 * (`memory_note.v1`, `memory_event.v1`, `session_end.v1`); anything else, or anything unusual
 * (a sealed note or item, a time with an offset), is "not sure", and the zod schemas decide.
 * Never true for an envelope zod refuses: `test/worker/envelope-check.test.ts` holds the two
 * to agreement.
 */
export function surelyValid(envelope: Record<string, unknown>): boolean {
  if (!envelopeHeadOk(envelope)) return false;
  const payload = envelope.payload as Record<string, unknown>;
  if (envelope.message_type === "memory_note.v1") return noteOk(payload);
  if (envelope.message_type === "memory_event.v1") return eventOk(payload);
  if (envelope.message_type === "session_end.v1") return sessionEndOk(payload);
  return false;
}

const PRIVACY = new Set(["public", "private", "sensitive"]);
const SESSION_ID = /^s_[0-9a-f]{16}$/;
const GIT_SHA = /^[0-9a-f]{7,64}$/;
const ITEM_KINDS = new Set<string>(SESSION_ITEM_KINDS);
const ITEM_FIELDS = new Set([
  ...["seq", "kind", "written_at", "text", "rationale", "sealed", "privacy", "confidence"],
  ...["outcome", "key", "value", "redactions"],
]);

/** `session_end.v1` (SessionEndPayload): what `worker session end` sends. */
function sessionEndOk(p: Record<string, unknown>): boolean {
  if (typeof p.session_id !== "string" || !SESSION_ID.test(p.session_id)) return false;
  if (p.name !== undefined && p.name !== null && !isShort(p.name, 512)) return false;
  if (!isCount(p.parent_version) || !isShort(p.parent_catalog_hash, 80)) return false;
  if (p.parent_commit !== undefined && p.parent_commit !== null) {
    if (typeof p.parent_commit !== "string" || !GIT_SHA.test(p.parent_commit)) return false;
  }
  if (!isShort(p.ended_at, 64) || !isCount(p.item_count)) return false;
  if (!isPositive(p.part) || !isPositive(p.parts) || (p.part as number) > (p.parts as number)) {
    return false;
  }
  return Array.isArray(p.items) && p.items.length <= 100_000 && p.items.every(itemOk);
}

/** One SessionEndItem (a strict object); a sealed item is left to zod. */
function itemOk(v: unknown): boolean {
  if (!isObject(v) || !Object.keys(v).every((k) => ITEM_FIELDS.has(k))) return false;
  if (!isPositive(v.seq) || !ITEM_KINDS.has(v.kind as string)) return false;
  if (!isShort(v.written_at, 64) || !isCount(v.redactions) || v.sealed !== undefined) return false;
  if (v.text !== undefined && !isText(v.text, 8000)) return false;
  if (v.rationale !== undefined && !isText(v.rationale, 8000)) return false;
  if (v.privacy !== undefined && !PRIVACY.has(v.privacy as string)) return false;
  if (v.confidence !== undefined && !isFraction(v.confidence)) return false;
  if (v.outcome !== undefined && !OUTCOMES.includes(v.outcome as never)) return false;
  return v.key === undefined || (typeof v.key === "string" && DOCUMENT_KEY_RE.test(v.key));
}

/** A string of at most `max` UTF-16 units, empty allowed (zod's `string().max(max)`). */
function isShort(v: unknown, max: number): boolean {
  return typeof v === "string" && v.length <= max;
}

/** A string of 1 to `max` UTF-16 units, as zod's `min(1).max(max)` counts. */
function isText(v: unknown, max: number): boolean {
  return isShort(v, max) && (v as string).length >= 1;
}

function isPositive(v: unknown): boolean {
  return isCount(v) && v > 0;
}

function isFraction(v: unknown): boolean {
  return typeof v === "number" && v >= 0 && v <= 1;
}
