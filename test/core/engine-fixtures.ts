import type { EngramBody } from "../../src/schema/engram.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";

/** A MemoryEvent as the buffer holds it, with defaults for what a test does not care about. */
export function memoryEvent(seq: number, fields: Partial<MemoryEvent> = {}): MemoryEvent {
  const at = new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + seq * 1000).toISOString();
  return {
    key: `id:ev-${seq}`,
    seq,
    received_at: at,
    type: "memory_note.v1",
    sender: { role: "worker", id: "w1" },
    sent_at: at,
    kind: "fact",
    text: `fact number ${seq}`,
    topics: [],
    links: [],
    privacy: "private",
    redactions: 0,
    ...fields,
  };
}

/** An ST engram body with empty content and zero signals, for tests to fill in. */
export function engramBody(fields: Partial<EngramBody> = {}): EngramBody {
  const version = fields.version ?? "20250101-000000Z";
  const iso = `${version.slice(0, 4)}-${version.slice(4, 6)}-${version.slice(6, 8)}T00:00:00.000Z`;
  return {
    version,
    scope: "st",
    created_at: iso,
    source_window: { start_ts: iso, end_ts: iso },
    topics: [],
    facts: [],
    decisions: [],
    links: [],
    provenance: { created_by: "test", run_id: "r", event_count: 1, senders: [], message_types: {} },
    privacy: "private",
    signals: {
      notes: 0,
      decisions: 0,
      lessons: 0,
      incidents: 0,
      errors: 0,
      max_surprise: null,
      mean_confidence: null,
      redactions: 0,
      truncated: 0,
    },
    ...fields,
  };
}
