/**
 * The check of a journal line read back before compaction: the schema's verdict, and the
 * schema made once (zod compiles each new schema at its first parse, which once cost most of
 * a compaction's time when every event made its own).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { storedEventProblem } from "../../src/core/ingest/stored-event.js";
import { MemoryEvent } from "../../src/schema/memory-event.js";
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
