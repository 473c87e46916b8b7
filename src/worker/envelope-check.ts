import { DOCUMENT_KEY_RE, SESSION_ITEM_KINDS } from "../core/versions/items.js";
import { isCount, isObject, isUtcTime } from "../schema/formats.js";
import { MESSAGE_TYPES } from "../schema/message-types.js";
import { NOTE_KINDS, OUTCOMES } from "../schema/note-kinds.js";

/**
 * Whether an envelope a worker built is certainly one the zod schemas accept (envelope and
 * payload), checked by hand: `worker emit`, `worker recall` and `worker session end` then
 * never load zod. Only the payloads workers send from the command line are known here
 * (`memory_note.v1`, `memory_event.v1`, `session_end.v1`); anything else, or anything unusual
 * (a sealed note or item, a time with an offset), is "not sure", and the zod schemas decide. Never true for an envelope zod refuses:
 * `test/worker/envelope-check.test.ts` holds the two to agreement.
 */
export function surelyValid(envelope: Record<string, unknown>): boolean {
  const { schema_version, message_type, sent_at, sender, seq, payload, event_id } = envelope;
  if (schema_version !== "agentbus-envelope/v1") return false;
  if (!MESSAGE_TYPES.includes(message_type as never) || !isUtcTime(sent_at)) return false;
  if (!isObject(sender) || !ROLES.has(sender.role as string) || !isSafeId(sender.id)) return false;
  if (sender.run_id !== undefined && !isText(sender.run_id, 128)) return false;
  if (!isCount(seq) || !isObject(payload)) return false;
  if (event_id !== undefined && !isText(event_id, 200)) return false;
  if (message_type === "memory_note.v1") return noteOk(payload);
  if (message_type === "memory_event.v1") return eventOk(payload);
  if (message_type === "session_end.v1") return sessionEndOk(payload);
  return false;
}

const ROLES = new Set(["director", "worker", "operator"]);
const PRIVACY = new Set(["public", "private", "sensitive"]);
const LINK_TYPES = new Set(["issue", "pr", "file", "spec", "commit", "url"]);
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** `memory_note.v1` (MemoryNotePayload): a note with its text in clear. */
function noteOk(p: Record<string, unknown>): boolean {
  if (!NOTE_KINDS.includes(p.kind as never)) return false;
  // A sealed note (privacy sensitive) is left to zod, and so is a note without text.
  if (p.sealed !== undefined || !isText(p.text, 8000)) return false;
  if (p.rationale !== undefined && !isText(p.rationale, 8000)) return false;
  if (p.topics !== undefined && !topicsOk(p.topics)) return false;
  if (p.links !== undefined && !linksOk(p.links)) return false;
  if (p.confidence !== undefined && !isFraction(p.confidence)) return false;
  if (p.outcome !== undefined && !OUTCOMES.includes(p.outcome as never)) return false;
  if (p.privacy !== undefined && !PRIVACY.has(p.privacy as string)) return false;
  return p.issue === undefined || issueOk(p.issue);
}

/** `memory_event.v1` (MemoryEventPayload): what `worker recall` spools as a signal. */
function eventOk(p: Record<string, unknown>): boolean {
  if (!isText(p.kind, 512)) return false;
  if (p.text !== undefined && !isText(p.text, 8000)) return false;
  if (p.topics !== undefined && !topicsOk(p.topics)) return false;
  if (p.links !== undefined && !linksOk(p.links)) return false;
  if (p.issue !== undefined && !issueOk(p.issue)) return false;
  if (p.privacy !== undefined && !PRIVACY.has(p.privacy as string)) return false;
  if (p.query !== undefined && !(typeof p.query === "string" && p.query.length <= 1000)) {
    return false;
  }
  if (p.hits === undefined) return true;
  return Array.isArray(p.hits) && p.hits.length <= 100 && p.hits.every(isSafeId);
}

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

function isPositive(v: unknown): boolean {
  return isCount(v) && v > 0;
}

function topicsOk(v: unknown): boolean {
  return Array.isArray(v) && v.length <= 32 && v.every((t) => isText(t, 64));
}

function linksOk(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > 32) return false;
  return v.every((link) => {
    if (typeof link === "string") return isText(link, 512);
    if (!isObject(link) || !LINK_TYPES.has(link.type as string) || !isText(link.ref, 512)) {
      return false;
    }
    // Link is a strict object: nothing but type and ref.
    return Object.keys(link).length === 2;
  });
}

function issueOk(v: unknown): boolean {
  return isText(v, 128) || isCount(v);
}

/** A string of 1 to `max` UTF-16 units, as zod's `min(1).max(max)` counts. */
function isText(v: unknown, max: number): boolean {
  return typeof v === "string" && v.length >= 1 && v.length <= max;
}

function isSafeId(v: unknown): boolean {
  return typeof v === "string" && SAFE_ID.test(v);
}

function isFraction(v: unknown): boolean {
  return typeof v === "number" && v >= 0 && v <= 1;
}
