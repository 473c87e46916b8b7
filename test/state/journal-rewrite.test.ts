import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import {
  EventBuffer,
  journalLine,
  type SerializedEvent,
  serializeEvent,
} from "../../src/state/buffer.js";
import { type StatePaths, statePaths } from "../../src/state/paths.js";
import { memoryEvent as anyEvent } from "../core/engine-fixtures.js";

let dir: string;
let paths: StatePaths;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-journal-"));
  paths = statePaths(dir, ".engram");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An event as today's ingest stores it: its key already in today's form. */
function memoryEvent(seq: number): MemoryEvent {
  return anyEvent(seq, { key: eventIdKey(`ev-${seq}`) });
}

function pending(n: number, from = 1): SerializedEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const { seq: _seq, ...rest } = memoryEvent(from + i);
    return serializeEvent(rest);
  });
}

/** Journal lines as an older writer might have laid them out: valid JSON, other spacing. */
function spacedLine(seq: number): string {
  return journalLine(memoryEvent(seq)).replace(',"received_at":', ', "received_at": ');
}

const seqs = (buffer: EventBuffer) => buffer.events.map((s) => s.event.seq);

describe("EventBuffer: the journal after a drop", () => {
  it("keeps the events it kept byte for byte, and counts what the file holds", () => {
    const lines = [1, 2, 3, 4, 5].map(spacedLine);
    expect(lines[0]).toContain(', "received_at": ');
    const buffer = EventBuffer.open(paths);
    buffer.closeJournal();
    writeFileSync(paths.journal, lines.join(""));
    const opened = EventBuffer.open(paths);
    opened.dropThrough(2, { compacted_events: 2 }, 1000);
    // The kept lines are the file's tail, copied as they were, not serialized again.
    expect(readFileSync(paths.journal, "utf8")).toBe(lines.slice(2).join(""));
    expect(opened.totalBytes).toBe(statSync(paths.journal).size);
    opened.append(pending(2, 6));
    opened.dropThrough(4, {}, 1000);
    opened.closeJournal();
    expect(readFileSync(paths.journal, "utf8").startsWith(lines[4] as string)).toBe(true);
    const again = EventBuffer.open(paths);
    expect(seqs(again)).toEqual([5, 6, 7]);
    expect(again.totalBytes).toBe(statSync(paths.journal).size);
    again.closeJournal();
  });

  it("after many appends and drops, holds exactly the events kept, whole lines, sized right", () => {
    const buffer = EventBuffer.open(paths, { retainEvents: false });
    buffer.append(pending(40));
    // As an ingest that must compact for room: the events are loaded only now.
    buffer.loadEvents();
    let next = 41;
    for (let through = 10; through <= 120; through += 10) {
      buffer.dropThrough(through, {}, 10_000);
      const expected = buffer.events.map((s) => journalLine(s.event)).join("");
      expect(readFileSync(paths.journal, "utf8")).toBe(expected);
      expect(buffer.totalBytes).toBe(statSync(paths.journal).size);
      buffer.append(pending(15, next), through % 20 === 0);
      next += 15;
    }
    buffer.closeJournal();
    const again = EventBuffer.open(paths);
    expect(seqs(again)).toEqual(buffer.events.map((s) => s.event.seq));
    expect(again.totalBytes).toBe(statSync(paths.journal).size);
    again.closeJournal();
  });

  it("serializes again what it cannot copy: a line skipped as a resend on open", () => {
    const lines = [1, 2, 3].map((seq) => journalLine(memoryEvent(seq)));
    // Event 2 stored twice (a copied state folder): the second is skipped when read.
    const twice = journalLine({ ...memoryEvent(2), seq: 4 });
    EventBuffer.open(paths).closeJournal();
    writeFileSync(paths.journal, [...lines, twice, journalLine(memoryEvent(5))].join(""));
    const opened = EventBuffer.open(paths);
    expect(seqs(opened)).toEqual([1, 2, 3, 5]);
    opened.dropThrough(1, {}, 1000);
    opened.closeJournal();
    const text = readFileSync(paths.journal, "utf8");
    expect(text).toBe([lines[1], lines[2], journalLine(memoryEvent(5))].join(""));
    expect(opened.totalBytes).toBe(statSync(paths.journal).size);
    // From here the file is the buffer's lines again: the next drop copies its tail.
    const again = EventBuffer.open(paths);
    again.dropThrough(2, {}, 1000);
    again.closeJournal();
    expect(readFileSync(paths.journal, "utf8")).toBe(
      [lines[2], journalLine(memoryEvent(5))].join(""),
    );
  });

  it("empties the journal when every event leaves", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(3));
    buffer.dropThrough(3, {}, 1000);
    buffer.closeJournal();
    expect(readFileSync(paths.journal, "utf8")).toBe("");
    expect(buffer.totalBytes).toBe(0);
  });
});

describe("EventBuffer: a journal written by an older version", () => {
  it("writes the kept events with today's keys when one was stored in its older form", () => {
    const old = journalLine(anyEvent(3));
    expect(old).toContain('"key":"id:ev-3"');
    EventBuffer.open(paths).closeJournal();
    writeFileSync(
      paths.journal,
      [journalLine(memoryEvent(1)), journalLine(memoryEvent(2)), old].join(""),
    );
    const opened = EventBuffer.open(paths);
    opened.dropThrough(1, {}, 1000);
    opened.closeJournal();
    expect(readFileSync(paths.journal, "utf8")).toBe(
      [journalLine(memoryEvent(2)), journalLine(memoryEvent(3))].join(""),
    );
    expect(opened.totalBytes).toBe(statSync(paths.journal).size);
  });
});

describe("a journal line that is JSON but no buffered event (issue 40)", () => {
  it("taken whole by an open without its events, is set aside when the events are loaded; later appends land in the rewritten journal", () => {
    const [first, second] = [journalLine(memoryEvent(1)), journalLine(memoryEvent(3))];
    // Laid out as ingest writes a line, so an open without events reads only its key.
    const forged = `{"seq":2,"key":"forged","sender":"mallory"}\n`;
    mkdirSync(join(dir, ".engram", "buffer"), { recursive: true });
    writeFileSync(paths.journal, `${first}${forged}${second}`);
    const told: unknown[] = [];
    const buffer = EventBuffer.open(paths, {
      retainEvents: false,
      onSetAside: (lines) => told.push(...lines),
    });
    expect(told).toEqual([]);
    buffer.append(pending(1, 4));
    buffer.loadEvents();
    expect(told).toEqual([
      expect.objectContaining({ line: 2, seq: 2, field: "received_at", reason: "not a string" }),
    ]);
    expect(buffer.events.map((s) => s.event.seq)).toEqual([1, 3, 4]);
    buffer.append(pending(1, 5));
    buffer.closeJournal();
    const lines = readFileSync(paths.journal, "utf8").split("\n").filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 3, 4, 5]);
    expect(
      readFileSync(join(dir, ".engram", "buffer", "set-aside", "journal.1.ndjson"), "utf8"),
    ).toBe(forged);
    const reopened = EventBuffer.open(paths);
    expect(reopened.setAside).toEqual([]);
    expect(reopened.count).toBe(4);
  });
});
