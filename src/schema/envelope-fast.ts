import { isCount, isObject, isUtcTime } from "./formats.js";
import { ENVELOPE_SCHEMA_VERSION, MESSAGE_TYPES } from "./message-types.js";
import { NOTE_KINDS, OUTCOMES } from "./note-kinds.js";

/**
 * The agent-bus schemas checked by hand, without zod, for the envelopes that arrive by the
 * hundred thousand (heartbeats, progress, errors, notes, recall signals) and for commands
 * that must start without loading zod. Every check answers "surely valid" or "not sure":
 * it never passes what `Envelope` and `PAYLOAD_SCHEMAS` refuse, and anything unusual (a time
 * with an offset, a sealed note, an unsafe integer) is left to zod, which then decides and
 * names the field. zod only copies what it accepts and adds a note's defaults, which the
 * normalizer supplies alike: an envelope passed here normalizes exactly as zod's output
 * would. `test/schema/envelope-fast.test.ts` and `test/worker/envelope-check.test.ts` hold
 * the two to agreement.
 */

type Obj = Record<string, unknown>;

/** The envelope's own fields (`Envelope`), whatever its message type. */
export function envelopeHeadOk(envelope: Obj): boolean {
  const { schema_version, message_type, sent_at, sender, seq, payload, event_id } = envelope;
  if (schema_version !== ENVELOPE_SCHEMA_VERSION) return false;
  if (!MESSAGE_TYPES.includes(message_type as never) || !isUtcTime(sent_at)) return false;
  if (!isObject(sender) || !ROLES.has(sender.role as string) || !isSafeId(sender.id)) return false;
  if (sender.run_id !== undefined && !isText(sender.run_id, 128)) return false;
  if (!isCount(seq) || !isObject(payload)) return false;
  return event_id === undefined || isText(event_id, 200);
}

/** Whether the payload of a `messageType` envelope surely passes its schema. */
export function payloadSurelyValid(messageType: unknown, p: Obj): boolean {
  switch (messageType) {
    case "heartbeat.v1":
      return heartbeatOk(p);
    case "task_progress.v1":
      return progressOk(p);
    case "worker_error.v1":
      return workerErrorOk(p);
    case "memory_note.v1":
      return noteOk(p);
    case "memory_event.v1":
      return eventOk(p);
    default:
      return false;
  }
}

/** A whole envelope, head and payload: surely valid, or not sure. */
export function envelopeSurelyValid(envelope: unknown): envelope is Obj & { payload: Obj } {
  return (
    isObject(envelope) &&
    envelopeHeadOk(envelope) &&
    payloadSurelyValid(envelope.message_type, envelope.payload as Obj)
  );
}

const ROLES = new Set(["director", "worker", "operator"]);
const PRIVACY = new Set(["public", "private", "sensitive"]);
const LINK_TYPES = new Set(["issue", "pr", "file", "spec", "commit", "url"]);
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const GIT_SHA = /^[0-9a-f]{7,64}$/;

/** `memory_note.v1` (MemoryNotePayload): a note with its text in clear. */
export function noteOk(p: Obj): boolean {
  if (!NOTE_KINDS.includes(p.kind as never)) return false;
  // A sealed note (privacy sensitive) is left to zod, and so is a note without text.
  if (p.sealed !== undefined || !isText(p.text, 8000)) return false;
  if (p.rationale !== undefined && !isText(p.rationale, 8000)) return false;
  if (p.topics !== undefined && !topicsOk(p.topics)) return false;
  if (p.links !== undefined && !linksOk(p.links)) return false;
  if (p.confidence !== undefined && !isBetween(p.confidence, 0, 1)) return false;
  if (p.outcome !== undefined && !OUTCOMES.includes(p.outcome as never)) return false;
  if (p.privacy !== undefined && !PRIVACY.has(p.privacy as string)) return false;
  // What a note replaces is rare: left to zod.
  if (p.supersedes !== undefined) return false;
  return p.issue === undefined || issueOk(p.issue);
}

/** `memory_event.v1` (MemoryEventPayload): what `worker recall` spools as a signal. */
export function eventOk(p: Obj): boolean {
  if (!isText(p.kind, 512)) return false;
  if (p.text !== undefined && !isText(p.text, 8000)) return false;
  if (p.topics !== undefined && !topicsOk(p.topics)) return false;
  if (p.links !== undefined && !linksOk(p.links)) return false;
  if (p.issue !== undefined && !issueOk(p.issue)) return false;
  if (p.privacy !== undefined && !PRIVACY.has(p.privacy as string)) return false;
  if (!optString(p.query, 1000)) return false;
  if (p.hits === undefined) return true;
  return Array.isArray(p.hits) && p.hits.length <= 100 && every(p.hits, isSafeId);
}

/** `heartbeat.v1` (HeartbeatPayload), upstream's `state` or our flat fields. */
function heartbeatOk(p: Obj): boolean {
  if (p.state !== undefined && !workerStateOk(p.state)) return false;
  if (p.stage !== undefined && !isText(p.stage, 512)) return false;
  if (p.issue !== undefined && !issueOk(p.issue)) return false;
  if (!optCount(p.issue_number) || !optCount(p.attempt)) return false;
  if (p.progress !== undefined && !progressValueOk(p.progress)) return false;
  return driftOk(p);
}

/** `task_progress.v1` (TaskProgressPayload). */
function progressOk(p: Obj): boolean {
  if (p.stage !== undefined && !isText(p.stage, 512)) return false;
  if (!optString(p.step, 512) || !optString(p.status, 64)) return false;
  if (p.percent !== undefined && !isBetween(p.percent, 0, 100)) return false;
  if (p.issue !== undefined && !issueOk(p.issue)) return false;
  if (!optCount(p.issue_number)) return false;
  if (p.progress !== undefined && !progressValueOk(p.progress)) return false;
  if (p.message !== undefined && !isText(p.message, 8000)) return false;
  return p.duration_ms === undefined || isBetween(p.duration_ms, 0, Number.MAX_VALUE);
}

/** `worker_error.v1` (WorkerErrorPayload), upstream's `error` or our flat fields. */
function workerErrorOk(p: Obj): boolean {
  if (p.error !== undefined && !errorDetailOk(p.error)) return false;
  if (p.error_type !== undefined && !isText(p.error_type, 512)) return false;
  if (p.message !== undefined && !isText(p.message, 8000)) return false;
  if (!optBoolean(p.retryable)) return false;
  if (p.issue !== undefined && !issueOk(p.issue)) return false;
  if (p.stage !== undefined && !isText(p.stage, 512)) return false;
  return optCount(p.attempt);
}

/** Upstream's WorkerErrorDetail. */
function errorDetailOk(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (v.error_id !== undefined && !isText(v.error_id, 200)) return false;
  if (!optString(v.worker_id, 200) || !optCount(v.issue_number) || !optCount(v.attempt)) {
    return false;
  }
  if (v.stage !== undefined && !isText(v.stage, 512)) return false;
  if (v.error_type !== undefined && !isText(v.error_type, 512)) return false;
  if (!optBoolean(v.is_transient) || !optBoolean(v.should_retry)) return false;
  if (!optBoolean(v.escalate_to_human)) return false;
  if (v.message !== undefined && !isText(v.message, 8000)) return false;
  return v.exit_code === undefined || Number.isSafeInteger(v.exit_code);
}

/** Upstream's WorkerState, a heartbeat's `state`. */
function workerStateOk(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (v.stage !== undefined && !isText(v.stage, 512)) return false;
  if (!optCount(v.issue_number) || !optCount(v.attempt)) return false;
  if (v.progress !== undefined && !stepProgressOk(v.progress)) return false;
  if (v.repo !== undefined && !repoViewOk(v.repo)) return false;
  return optString(v.last_error_id, 200) && optString(v.last_update_at, 64);
}

/** A fraction (0..1) or upstream's `{step, percent}`. */
function progressValueOk(v: unknown): boolean {
  return isBetween(v, 0, 1) || stepProgressOk(v);
}

function stepProgressOk(v: unknown): boolean {
  if (!isObject(v) || !optString(v.step, 512)) return false;
  return v.percent === undefined || isBetween(v.percent, 0, 100);
}

function repoViewOk(v: unknown): boolean {
  if (!isObject(v) || !optString(v.branch_name, 512) || !optString(v.base_branch, 512)) {
    return false;
  }
  if (v.main_sha_seen !== undefined && !isGitSha(v.main_sha_seen)) return false;
  return driftOk(v);
}

/** `main_ancestor_sha` and `catalog_hash_seen`, where a payload has them. */
function driftOk(v: Obj): boolean {
  if (v.main_ancestor_sha !== undefined && !isGitSha(v.main_ancestor_sha)) return false;
  return optString(v.catalog_hash_seen, 80);
}

function topicsOk(v: unknown): boolean {
  return Array.isArray(v) && v.length <= 32 && every(v, (t) => isText(t, 64));
}

function linksOk(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > 32) return false;
  return every(v, (link) => {
    if (typeof link === "string") return isText(link, 512);
    if (!isObject(link) || !LINK_TYPES.has(link.type as string) || !isText(link.ref, 512)) {
      return false;
    }
    // Link is a strict object: nothing but type and ref.
    return Object.keys(link).length === 2;
  });
}

/** Like `Array.prototype.every`, but a hole is an element too (undefined), as zod sees it. */
function every(items: readonly unknown[], ok: (item: unknown) => boolean): boolean {
  for (let i = 0; i < items.length; i++) if (!ok(items[i])) return false;
  return true;
}

function issueOk(v: unknown): boolean {
  return isText(v, 128) || isCount(v);
}

/** A string of 1 to `max` UTF-16 units, as zod's `min(1).max(max)` counts. */
function isText(v: unknown, max: number): boolean {
  return typeof v === "string" && v.length >= 1 && v.length <= max;
}

/** Absent, or a string of at most `max` UTF-16 units (zod's `string().max(max).optional()`). */
function optString(v: unknown, max: number): boolean {
  return v === undefined || (typeof v === "string" && v.length <= max);
}

/** Absent, or a non-negative safe integer. */
function optCount(v: unknown): boolean {
  return v === undefined || isCount(v);
}

function optBoolean(v: unknown): boolean {
  return v === undefined || typeof v === "boolean";
}

function isSafeId(v: unknown): boolean {
  return typeof v === "string" && SAFE_ID.test(v);
}

function isGitSha(v: unknown): boolean {
  return typeof v === "string" && GIT_SHA.test(v);
}

/** A finite number within `[min, max]`. */
function isBetween(v: unknown, min: number, max: number): boolean {
  return typeof v === "number" && Number.isFinite(v) && v >= min && v <= max;
}
