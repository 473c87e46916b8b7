import type { Privacy } from "../../schema/common.js";
import { canonicalJson, sha256Hex } from "../model/canonical.js";
import { cutText, wellFormed } from "../model/text.js";
import type { RedactionResult, Redactor } from "./redact.js";
import { errorDedupKey } from "./telemetry-fields.js";

/**
 * What ingest derives from a line besides its normalized event: the deduplication keys, the
 * quarantine excerpt, a redacted sender id and the strictest privacy.
 */

const PRIVACY_RANK: Record<Privacy, number> = { public: 0, private: 1, sensitive: 2 };

/** The privacy values, in order from the most open; a plain list, so readers load no zod. */
export const PRIVACIES = Object.keys(PRIVACY_RANK) as Privacy[];

/** Whether a value read from a file is a privacy tag (without loading the schema library). */
export function isPrivacy(value: unknown): value is Privacy {
  return typeof value === "string" && Object.hasOwn(PRIVACY_RANK, value);
}

export function strictestPrivacy(a: Privacy, b: Privacy): Privacy {
  return PRIVACY_RANK[a] >= PRIVACY_RANK[b] ? a : b;
}

/**
 * How far past the excerpt a rejected line is read: room for a secret that starts in the
 * excerpt and runs on (a PEM block of a 4096-bit key, JSON-escaped, is some 3,400 characters).
 */
const EXCERPT_CONTEXT_CHARS = 16_384;

/**
 * The start of a rejected line, kept in the quarantine so a person can see what came in.
 * The line is cut first to the excerpt and its context (a rejected line may be of any length,
 * and nothing is scanned whole), then JSON string escapes are decoded (`\u0067hp_...` is a
 * token too), then that head is redacted before it is cut to the excerpt (on a grapheme
 * boundary), so a secret straddling the excerpt's end cannot leak as an unrecognisable prefix.
 */
export function quarantineExcerpt(
  line: string,
  redactor: Redactor,
  maxChars = 300,
): RedactionResult {
  const head = cutText(line, maxChars + EXCERPT_CONTEXT_CHARS);
  const redacted = redactor.redact(wellFormed(decodeJsonEscapes(head)).text);
  return { text: cutText(redacted.text, maxChars), count: redacted.count };
}

const JSON_ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt]))/g;
const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** The text with JSON string escapes decoded, also where the line as a whole is not JSON. */
export function decodeJsonEscapes(text: string): string {
  if (!text.includes("\\")) return text;
  return text.replace(JSON_ESCAPE, (_m, hex: string | undefined, simple: string | undefined) =>
    hex !== undefined
      ? String.fromCharCode(Number.parseInt(hex, 16))
      : (SIMPLE_ESCAPES[simple as string] as string),
  );
}

/**
 * The deduplication key: a worker error's `error_id` (repeated reports of one error are one),
 * else the writer's `event_id`, else the digest of the whole envelope.
 */
export function dedupKey(envelope: Record<string, unknown>): string {
  const errorKey = errorDedupKey(envelope);
  // A digest, never the sender id and error id themselves (they reach the journal).
  if (errorKey !== undefined) return `eh:${sha256Hex(errorKey)}`;
  const id = envelope.event_id;
  if (typeof id === "string" && id.length > 0) return eventIdKey(id);
  return `h:${sha256Hex(canonicalJson(envelope))}`;
}

/**
 * The key of a writer's `event_id`: its digest, never the id itself (a writer may put
 * anything there, and the keys reach the journal, `seen.keys` and the state branch).
 */
export function eventIdKey(id: string): string {
  return `ih:${sha256Hex(id)}`;
}

/** A key written before event ids were hashed (`id:<event_id>`), in today's form. */
export function currentKey(key: string): string {
  return key.startsWith("id:") ? eventIdKey(key.slice(3)) : key;
}

/** A sender id, redacted and still a safe id: `[REDACTED:github-pat]` becomes `REDACTED-github-pat`. */
export function redactSenderId(id: string, redactor: Redactor): RedactionResult {
  const result = redactor.redact(id);
  if (result.count === 0) return result;
  const text = result.text
    .replace(/\[REDACTED:([a-z0-9-]+)\]/g, "REDACTED-$1")
    .replace(/[^A-Za-z0-9_-]/g, "-")
    .slice(0, 128);
  return { text, count: result.count };
}
