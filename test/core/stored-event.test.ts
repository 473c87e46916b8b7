/**
 * The check of a journal line read back before compaction: the schema's verdict, and the
 * schema made once (zod compiles each new schema at its first parse, which once cost most of
 * a compaction's time when every event made its own).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { normalizeLine } from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { redactStoredEvent, storedEventProblem } from "../../src/core/ingest/stored-event.js";
import { ENVELOPE_SCHEMAS } from "../../src/schema/envelope.js";
import { MemoryEvent } from "../../src/schema/memory-event.js";
import { gitleaksCases, SECRETLINT } from "../support/peer-cases.js";
import { memoryEvent } from "./engine-fixtures.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("storedEventProblem", () => {
  it("passes an event as ingest writes it, and one with a field this version does not know", () => {
    const event = memoryEvent(1);
    expect(storedEventProblem(event, JSON.stringify(event), 65_536)).toBeUndefined();
    const later = { ...event, written_by_a_later_version: true };
    expect(storedEventProblem(later, JSON.stringify(later), 65_536)).toBeUndefined();
  });

  it("names the first field that fails, and a line larger than a message could make", () => {
    const event = { ...memoryEvent(2), kind: "" };
    expect(storedEventProblem(event, JSON.stringify(event), 65_536)).toMatch(/^kind: /);
    const long = memoryEvent(3, { text: "x".repeat(200) });
    expect(storedEventProblem(long, JSON.stringify(long), 64)).toMatch(
      /characters, more than a message of agent_bus\.max_message_bytes \(64\)/,
    );
  });

  it("makes its schema once, however many events it checks", () => {
    const strip = vi.spyOn(MemoryEvent, "strip");
    for (let seq = 1; seq <= 50; seq++) {
      const event = memoryEvent(seq);
      expect(storedEventProblem(event, JSON.stringify(event), 65_536)).toBeUndefined();
    }
    expect(strip.mock.calls.length).toBeLessThanOrEqual(1);
  });
});

/**
 * A compaction in the process that ingested an event keeps it as it is (`redactedEvents`,
 * `EventBuffer.heldAtOpen`): that is sound only while what ingest writes is a fixed point of
 * the compaction's check and redaction, for every field a secret can arrive in. A topic sent
 * in capitals was once lower-cased after its redaction, and the lower-cased secret left for
 * the compaction to find.
 */
describe("what ingest writes, read back by a compaction", () => {
  const ctx = {
    receivedAt: "2026-11-22T10:00:00.000Z",
    maxMessageBytes: 65_536,
    schemas: ENVELOPE_SCHEMAS,
    redactor: createRedactor(),
    sealKey: undefined,
  };
  const { tps, fps } = gitleaksCases();
  const texts = [...tps, ...fps, ...SECRETLINT.cases].map((c) => c.text);

  function envelopes(text: string, n: number): unknown[] {
    const line = text.split("\n")[0]?.slice(0, 60) ?? "";
    const env = (type: string, payload: Record<string, unknown>, id = "worker-1") => ({
      schema_version: "agentbus-envelope/v1",
      message_type: type,
      sent_at: "2026-11-02T09:00:00.000Z",
      sender: { role: "worker", id, run_id: line.replace(/\s/g, "") || "run" },
      seq: 1,
      payload,
      event_id: `ev_${n.toString(16).padStart(32, "0")}`,
    });
    const topics = [line, line.toUpperCase(), line.toLowerCase()];
    return [
      env("memory_note.v1", { kind: "fact", text, rationale: text, topics, links: [line] }),
      env(
        "memory_note.v1",
        { kind: "decision", text: `Use ${text}`, rationale: `because ${text}`, topics: [] },
        line.replace(/[^\w.-]/g, "").slice(0, 60) || "w",
      ),
      env("worker_error.v1", { error_type: line, message: text, stage: line, topics }),
      env("task_progress.v1", { stage: line, status: line, message: text, progress: 0.5 }),
    ];
  }

  it("is a fixed point of storedEventProblem and redactStoredEvent, over the peers' secret cases", () => {
    let events = 0;
    const changed: string[] = [];
    texts.forEach((text, i) => {
      for (const envelope of envelopes(text, i)) {
        const result = normalizeLine(JSON.stringify(envelope), ctx);
        if (!result.ok) continue;
        events++;
        const stored = { seq: events, ...result.event } as MemoryEvent;
        expect(storedEventProblem(stored, JSON.stringify(stored), ctx.maxMessageBytes)).toBe(
          undefined,
        );
        const again = redactStoredEvent(stored, ctx.redactor);
        if (again.count > 0) changed.push(JSON.stringify(stored).slice(0, 200));
      }
    });
    expect(events).toBeGreaterThan(20_000);
    expect(changed.slice(0, 5)).toEqual([]);
  });
});
