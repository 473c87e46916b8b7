import type { MemoryEvent } from "../src/schema/memory-event.js";

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
