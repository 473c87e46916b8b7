import { type MemoryEvent, MemoryEvent as MemoryEventSchema } from "../../schema/memory-event.js";
import { type Redactor, redactValue } from "./redact.js";

/**
 * Fields of a buffered event that ingest wrote from validated input or computed itself (keys,
 * times, kinds, hashes, ciphertext): never prose, and a redaction would break them.
 */
const STRUCTURAL = new Set([
  "seq",
  "key",
  "received_at",
  "sent_at",
  "type",
  "kind",
  "privacy",
  "sealed",
  "redactions",
  "main_ancestor_sha",
  "catalog_hash_seen",
  "hits",
  "confidence",
  "outcome",
  "retryable",
  "progress",
  "duration_ms",
  "attempt",
]);

/**
 * A journal line redacted again, as ingest redacts a worker's line: the journal may come from
 * a state folder restored from a branch, so what it holds is compacted only once every piece
 * of its text has been through the redactor. `count` is 0 (and `event` the same object) when
 * nothing was found. Pure.
 */
export function redactStoredEvent(
  event: MemoryEvent,
  redactor: Redactor,
): { event: MemoryEvent; count: number } {
  let count = 0;
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(event)) {
    if (STRUCTURAL.has(field) || value === undefined) {
      out[field] = value;
      continue;
    }
    if (field === "session" && value !== null && typeof value === "object") {
      // A session part's sealed texts are ciphertext: kept as they are.
      const { sealed, ...rest } = value as Record<string, unknown>;
      const result = redactValue(rest, redactor);
      count += result.count;
      out[field] = sealed === undefined ? result.value : { ...(result.value as object), sealed };
      continue;
    }
    const result = redactValue(value, redactor);
    count += result.count;
    out[field] = result.value;
  }
  if (count === 0) return { event, count };
  const redacted = out as unknown as MemoryEvent;
  const before = typeof event.redactions === "number" ? event.redactions : 0;
  return { event: { ...redacted, redactions: before + count } as MemoryEvent, count };
}

let stripped: ReturnType<typeof MemoryEventSchema.strip> | undefined;

/**
 * The schema made once: each `.strip()` is a new schema that zod compiles again at its first
 * parse, and a compaction for room checks every event of its slice (most of its time).
 */
function strippedSchema(): ReturnType<typeof MemoryEventSchema.strip> {
  stripped ??= MemoryEventSchema.strip();
  return stripped;
}

/**
 * Why a journal line is not a buffered event ingest could have written, or undefined: the
 * `MemoryEvent` schema (the first field it fails, by its path), and no larger than a worker's
 * message could make it (a sealed text grows by a third, so twice `max_message_bytes`). Pure.
 */
export function storedEventProblem(
  event: unknown,
  text: string,
  maxMessageBytes: number,
): string | undefined {
  if (text.length > 2 * maxMessageBytes) {
    return `${text.length} characters, more than a message of agent_bus.max_message_bytes (${maxMessageBytes}) makes`;
  }
  // A field this version does not know is no threat (the compaction reads none): only the
  // fields it knows must be as ingest writes them.
  const parsed = strippedSchema().safeParse(event);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : "(the line)";
  return `${field}: ${issue?.message ?? "not a buffered event"}`;
}
