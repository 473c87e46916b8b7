import type { MemoryEvent } from "../../schema/memory-event.js";
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
