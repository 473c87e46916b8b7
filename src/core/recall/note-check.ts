import { RECALL_NOTE_KINDS, RECALL_SCOPES, type RecallNote } from "./notes.js";

/**
 * The shape check of a recall note read from a cache: the state folder is input like any
 * other, so a note whose fields are not what recall reads (a number for a text, an unknown
 * field, a non-finite confidence) is refused, and the cache derived again.
 */

const KINDS = new Set<string>(RECALL_NOTE_KINDS);
const SCOPES = new Set<string>(RECALL_SCOPES);
const FIELDS = new Set([
  "id",
  "kind",
  "text",
  "rationale",
  "topics",
  "scope",
  "engram_id",
  "path",
  "commit",
  "at",
  "senders",
  "outcome",
  "confidence",
  "superseded_by",
  "tokens",
]);

/** Whether `data` is a recall note, field by field. */
export function isRecallNote(data: unknown): data is RecallNote {
  if (!isRecord(data)) return false;
  for (const key of Object.keys(data)) if (!FIELDS.has(key)) return false;
  const n = data;
  const optionalString = (v: unknown) => v === undefined || typeof v === "string";
  const tokens = n.tokens;
  return (
    typeof n.id === "string" &&
    typeof n.kind === "string" &&
    KINDS.has(n.kind) &&
    typeof n.text === "string" &&
    optionalString(n.rationale) &&
    isStrings(n.topics) &&
    typeof n.scope === "string" &&
    SCOPES.has(n.scope) &&
    optionalString(n.engram_id) &&
    optionalString(n.path) &&
    optionalString(n.commit) &&
    typeof n.at === "string" &&
    isStrings(n.senders) &&
    optionalString(n.outcome) &&
    (n.confidence === undefined ||
      (typeof n.confidence === "number" && Number.isFinite(n.confidence))) &&
    (n.superseded_by === undefined || isStrings(n.superseded_by)) &&
    (tokens === undefined ||
      (isRecord(tokens) &&
        Object.keys(tokens).length === 2 &&
        isCount(tokens.text) &&
        isCount(tokens.rationale)))
  );
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isStrings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

function isCount(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}
