import { normalizeLine, quarantineExcerpt } from "../core/ingest/normalize.js";
import type { Redactor } from "../core/ingest/redact.js";
import type { EnvelopeSchemas } from "../schema/envelope.js";
import { type SerializedEvent, serializeEvent } from "../state/buffer.js";
import { type QuarantineRecord, quarantineKey } from "../state/quarantine.js";

export interface InputLine {
  text: string;
  source: string;
  line: number;
  /** Who sent it, for a per-sender share (the TCP hub's); absent elsewhere. */
  sender?: string;
}

export interface BatchSettings {
  receivedAt: string;
  maxMessageBytes: number;
  redactor: Redactor;
  sealKey: Uint8Array | undefined;
}

export type LineOutcome =
  | { ok: true; event: SerializedEvent; repaired: number }
  | { ok: false; record: QuarantineRecord; redactions: number; note: boolean };

/** The quarantine detail of a line that is a `worker emit --from` note, not an envelope. */
export const NOTE_LINE_DETAIL =
  "a worker note (kind, text), not an agent-bus envelope: send a notes file with `worker emit --from FILE`";

/**
 * A line of a `worker emit --from` notes file (an object with `kind` and `text` and none of
 * the envelope's fields): a common mistake worth naming instead of a schema error.
 */
export function looksLikeWorkerNote(text: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const fields = value as Record<string, unknown>;
  return (
    typeof fields.kind === "string" &&
    typeof fields.text === "string" &&
    fields.schema_version === undefined &&
    fields.message_type === undefined
  );
}

let schemas: EnvelopeSchemas | undefined;

/**
 * Loads the zod schemas of the envelopes (once per thread). A stream the quick check is sure
 * of never needs them, and they were a good share of `director ingest`'s start-up.
 */
export async function loadEnvelopeSchemas(): Promise<void> {
  schemas ??= (await import("../schema/envelope.js")).ENVELOPE_SCHEMAS;
}

/**
 * Normalizes a batch of input lines into serialized events or quarantine records, in input
 * order. Undefined when a line needs the zod schemas and they are not loaded yet: call
 * `loadEnvelopeSchemas()`, then this again (normalizing has no side effects).
 */
export function normalizeBatch(
  lines: readonly InputLine[],
  settings: BatchSettings,
): LineOutcome[] | undefined {
  const { receivedAt, redactor } = settings;
  const context = { ...settings, schemas };
  const out: LineOutcome[] = [];
  for (const input of lines) {
    const result = normalizeLine(input.text, context);
    if (result.ok) {
      out.push({ ok: true, event: serializeEvent(result.event), repaired: result.repaired });
      continue;
    }
    if (result.reason === "needs-schemas") return undefined;
    const excerpt = quarantineExcerpt(input.text, redactor);
    const note = result.reason === "invalid-envelope" && looksLikeWorkerNote(input.text);
    out.push({
      ok: false,
      redactions: result.redactions + excerpt.count,
      note,
      record: {
        received_at: receivedAt,
        source: input.source,
        line: input.line,
        reason: result.reason,
        detail: note ? NOTE_LINE_DETAIL : result.detail,
        excerpt: excerpt.text,
        bytes: Buffer.byteLength(input.text, "utf8"),
        key: quarantineKey(input.source, input.line, input.text),
      },
    });
  }
  return out;
}

/**
 * The complete lines of a chunk of NDJSON text, numbered from `firstLine` (a trailing
 * `\r` is dropped). Blank lines are skipped but keep their number.
 */
export function splitLines(text: string, firstLine: number, source: string): InputLine[] {
  const out: InputLine[] = [];
  let start = 0;
  let n = firstLine;
  while (start < text.length) {
    let newline = text.indexOf("\n", start);
    if (newline === -1) newline = text.length;
    const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
    if (!isBlank(text, start, end)) out.push({ text: text.slice(start, end), source, line: n });
    n++;
    start = newline + 1;
  }
  return out;
}

/** Nothing but blanks from `start` to `end`: skipped, as an empty line. */
export function isBlank(text: string, start = 0, end = text.length): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/**
 * Outcomes packed into a few large values: cheap to pass between threads (one string for all
 * bodies, which JSON never lets contain a newline) instead of thousands of small objects.
 */
export interface PackedOutcomes {
  receivedAt: string;
  keys: string[];
  bodies: string;
  redactions: number[];
  quarantine: QuarantineRecord[];
  quarantineRedactions: number;
  /** Lone surrogates replaced by U+FFFD in the accepted events. */
  repaired: number;
  /** Quarantined lines that are worker notes (`NOTE_LINE_DETAIL`). */
  noteLines: number;
}

export function packOutcomes(outcomes: readonly LineOutcome[], receivedAt: string): PackedOutcomes {
  const keys: string[] = [];
  const bodies: string[] = [];
  const redactions: number[] = [];
  const quarantine: QuarantineRecord[] = [];
  let quarantineRedactions = 0;
  let repaired = 0;
  let noteLines = 0;
  for (const outcome of outcomes) {
    if (outcome.ok) {
      repaired += outcome.repaired;
      keys.push(outcome.event.key);
      bodies.push(outcome.event.body);
      redactions.push(outcome.event.redactions);
    } else {
      quarantine.push(outcome.record);
      quarantineRedactions += outcome.redactions;
      if (outcome.note) noteLines++;
    }
  }
  return {
    receivedAt,
    keys,
    bodies: bodies.join("\n"),
    redactions,
    quarantine,
    quarantineRedactions,
    repaired,
    noteLines,
  };
}

export function unpackEvents(packed: PackedOutcomes): SerializedEvent[] {
  if (packed.keys.length === 0) return [];
  const bodies = packed.bodies.split("\n");
  return packed.keys.map((key, i) => ({
    key,
    body: bodies[i] as string,
    received_at: packed.receivedAt,
    redactions: packed.redactions[i] as number,
  }));
}
