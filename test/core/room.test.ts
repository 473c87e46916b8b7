/**
 * Compaction for room as values: the slice's engrams and the ledger, the ledger and pending
 * files read back from a state folder that may be damaged or hostile, and a cycle that takes
 * the pending engrams in as its own.
 */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { planCycle } from "../../src/core/compaction/plan.js";
import {
  MAX_GROUPS_PER_SLICE,
  parsePending,
  pendingEngrams,
  planRoomCompaction,
  roomLinker,
  slicePolicy,
} from "../../src/core/compaction/room.js";
import {
  emptyLedger,
  parseLedger,
  pendingFileName,
  roomReport,
  serializeLedger,
} from "../../src/core/compaction/room-ledger.js";
import { sha256Hex } from "../../src/core/model/canonical.js";
import { emptyCatalog, serializeEngram } from "../../src/core/model/engram.js";
import { defaultConfig } from "../../src/schema/config.js";
import { Registry } from "../../src/schema/registry.js";
import { memoryEvent } from "./engine-fixtures.js";

const memory = defaultConfig().memory;
const slice = Array.from({ length: 12 }, (_, i) =>
  memoryEvent(i + 1, { text: `room fact ${i}`, topics: [`t${i % 3}`] }),
);

function plan() {
  const ledger = emptyLedger();
  return planRoomCompaction({ slice, memory, ledger, pendingFile: pendingFileName(ledger) });
}

function engramsOf(...plans: ReturnType<typeof plan>[]) {
  return pendingEngrams(plans, memory, undefined).engrams;
}

describe("compaction for room", () => {
  it("leaves the slice's group records, which make the engrams a cycle would, counted in the ledger", () => {
    const room = plan();
    const cycle = planCycle({
      slice,
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory,
      asOf: slice[slice.length - 1]?.received_at as string,
    });
    expect(room.engrams).toEqual([]);
    expect(room.groups.map((g) => g.group.label)).toEqual(["t0", "t1", "t2"]);
    expect(engramsOf(room).map(serializeEngram).sort()).toEqual(
      cycle.written.map(serializeEngram).sort(),
    );
    expect(roomReport(room.ledger)).toEqual({
      compactions: 1,
      events: 12,
      engrams: 0,
      groups: 3,
      written_by_ingest: 0,
    });
    expect(room.ledger.pending).toEqual([
      { file: "pending-00000001.ndjson", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(parseLedger(serializeLedger(room.ledger))).toEqual(room.ledger);
    // A ledger written before group records existed reads as one without any.
    const { groups: _, ...older } = room.ledger;
    expect(parseLedger(JSON.stringify(older))).toEqual({ ...room.ledger, groups: 0 });
  });

  it("compacted in many slices, a stream makes the engrams of one slice, byte for byte", () => {
    // Notes, decisions said again across slices, heartbeats whose stages and gaps cross the
    // cuts, errors reported again under one id: 240 events in 12 slices of 20.
    const stream = Array.from({ length: 240 }, (_, i) => {
      const seq = i + 1;
      const sender = { role: "worker" as const, id: `w${i % 5}` };
      if (i % 4 === 1) {
        return memoryEvent(seq, {
          type: "heartbeat.v1",
          kind: "heartbeat",
          text: undefined,
          sender,
          stage: ["plan", "build", "blocked"][Math.floor(i / 40) % 3] as string,
          issue: `#${i % 3}`,
        });
      }
      if (i % 9 === 2) {
        return memoryEvent(seq, {
          type: "worker_error.v1",
          kind: "error",
          text: "timeout talking to the registry",
          error_type: "Timeout",
          error_id: `e${i % 2}`,
          sender,
          issue: `#${i % 3}`,
        });
      }
      return memoryEvent(seq, {
        kind: i % 5 === 0 ? "decision" : "fact",
        text: `note ${i % 37} on issue ${i % 3}`,
        ...(i % 5 === 0 ? { rationale: `reason ${i % 4}` } : {}),
        issue: `#${i % 3}`,
        confidence: (i % 10) / 10,
        outcome: "success",
        sender,
      });
    });
    let ledger = emptyLedger();
    const plans: ReturnType<typeof plan>[] = [];
    for (let start = 0; start < stream.length; start += 20) {
      const room = planRoomCompaction({
        slice: stream.slice(start, start + 20),
        memory,
        ledger,
        pendingFile: pendingFileName(ledger),
      });
      plans.push(room);
      ledger = room.ledger;
    }
    expect(ledger.groups).toBe(36);
    const once = compactSlice(stream, slicePolicy(memory, undefined, undefined));
    // Three groups, their episodes spread over parts of 32, and each note's own senders (five
    // workers say the same notes) taking room beside them.
    expect(once.length).toBe(9);
    expect(once.some((e) => Object.keys(e.said_by ?? {}).length > 0)).toBe(true);
    expect(engramsOf(...plans).map(serializeEngram)).toEqual(once.map(serializeEngram));
    // Read back from their files, they make the same.
    const read = plans.map((p, i) =>
      parsePending(p.pendingText, ledger.pending[i]?.sha256 as string),
    );
    expect(pendingEngrams(read as never, memory, undefined).engrams).toEqual(once);
  });

  it("keeps the same groups from slice to slice: the labels' earlier events count", () => {
    // 40 issues; each slice favours 23 others (5 notes each, 1 for the rest), so a slice
    // alone would keep a different 23 each time, and every one becomes a group of its own.
    let seq = 0;
    const slices = Array.from({ length: 10 }, (_, k) =>
      Array.from({ length: 40 }, (_, issue) => {
        const favoured = (issue - 3 * k + 400) % 40 < 23;
        return Array.from({ length: favoured ? 5 : 1 }, () => {
          seq++;
          return memoryEvent(seq, { text: `note ${seq}`, issue: `#${issue}` });
        });
      }).flat(),
    );
    const labels = (rank: boolean) => {
      let ledger = emptyLedger();
      const seen = new Set<string>();
      const plans: ReturnType<typeof plan>[] = [];
      for (const part of slices) {
        const room = planRoomCompaction({
          slice: part,
          memory,
          ledger: rank ? ledger : { ...ledger, labels: [] },
          pendingFile: pendingFileName(ledger),
        });
        for (const g of room.groups) seen.add(g.group.label);
        plans.push(room);
        ledger = room.ledger;
      }
      const facts = engramsOf(...plans).flatMap((e) => e.facts);
      return { seen: seen.size, facts: new Set(facts).size, ledger };
    };
    const ranked = labels(true);
    const alone = labels(false);
    expect(alone.seen).toBeGreaterThan(30);
    expect(ranked.seen).toBeLessThanOrEqual(26);
    // Nothing is lost either way: every note is a fact of memory.
    expect(ranked.facts).toBe(seq);
    expect(alone.facts).toBe(seq);
    expect(ranked.ledger.labels.reduce((n, [, c]) => n + c, 0)).toBe(seq);
  });

  it("joined across compactions, the groups are capped as one slice's are: the smallest join other", () => {
    // 40 issues; each slice favours 23 others and no slice knows the earlier ones (a ledger
    // without labels), so the slices keep more than 30 labels between them.
    let seq = 0;
    let ledger = emptyLedger();
    const plans: ReturnType<typeof plan>[] = [];
    for (let k = 0; k < 10; k++) {
      const part = Array.from({ length: 40 }, (_, issue) => {
        const favoured = (issue - 3 * k + 400) % 40 < 23;
        return Array.from({ length: favoured ? 5 : 1 }, () => {
          seq++;
          return memoryEvent(seq, { text: `note ${seq}`, issue: `#${issue}` });
        });
      }).flat();
      const room = planRoomCompaction({
        slice: part,
        memory,
        ledger: { ...ledger, labels: [] },
        pendingFile: pendingFileName(ledger),
      });
      plans.push(room);
      ledger = room.ledger;
    }
    expect(new Set(plans.flatMap((p) => p.groups.map((g) => g.group.label))).size).toBeGreaterThan(
      30,
    );
    const engrams = engramsOf(...plans);
    const labels = new Set(engrams.map((e) => e.topics[0]));
    expect(labels.size).toBeLessThanOrEqual(MAX_GROUPS_PER_SLICE);
    expect(labels.has("other")).toBe(true);
    // Nothing is lost: every note is a fact of memory.
    expect(new Set(engrams.flatMap((e) => e.facts)).size).toBe(seq);
  });

  it("a cycle takes pending engrams as new ones, each once, and never those already listed", () => {
    const room = plan();
    const input = {
      slice: [],
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory,
      asOf: slice[slice.length - 1]?.received_at as string,
    };
    const pending = engramsOf(room);
    const taken = planCycle({ ...input, pending: [...pending, ...pending] });
    expect(taken.written.map((e) => e.engram_id).sort()).toEqual(
      pending.map((e) => e.engram_id).sort(),
    );
    expect(taken.catalog.entries).toHaveLength(pending.length);
    // Once listed (a cycle whose end was lost ran again), they are not new.
    const again = planCycle({ ...input, catalog: taken.catalog, pending: engramsOf(room) });
    expect(again.written).toEqual([]);
  });

  it("reads back only what it wrote: a damaged or forged ledger or pending file is refused", () => {
    const room = plan();
    const digest = room.ledger.pending[0]?.sha256 as string;
    expect(parsePending(room.pendingText, digest)).toEqual({ engrams: [], groups: room.groups });
    // One byte changed, a line cut, another file swapped in: the digest says so.
    expect(parsePending(room.pendingText.replace("room fact", "room fakt"), digest)).toMatch(
      /do not match the sha256/,
    );
    expect(parsePending(room.pendingText.slice(0, -10), digest)).toMatch(/sha256/);
    // A line of the wrong shape is refused even with a matching digest (a forged ledger).
    const engram = engramsOf(room)[0];
    const forged = `${JSON.stringify({ ...engram, scope: "lt" })}\n`;
    expect(parsePending(forged, sha256Hex(forged))).toMatch(/line 1: scope/);
    // A group record is checked field by field, and the error names the line and the field.
    const group = room.groups[0] as (typeof room.groups)[number];
    const line = (value: unknown) =>
      `${JSON.stringify(room.groups[1])}\n${JSON.stringify(value)}\n`;
    const refused = (value: unknown) => parsePending(line(value), sha256Hex(line(value)));
    expect(refused({ ...group, version: "yesterday" })).toMatch(/^line 2: group\.version: /);
    expect(refused({ ...group, group: { ...group.group, events: -3 } })).toMatch(
      /^line 2: group\.group\.events: /,
    );
    expect(
      refused({ ...group, group: { ...group.group, links: [{ type: "file", ref: "" }] } }),
    ).toMatch(/^line 2: group\.group\.links\.0\.ref: /);
    expect(
      refused({
        ...group,
        group: { ...group.group, telemetry: { workers: [{ worker: "a\nb" }], errors: [] } },
      }),
    ).toMatch(/^line 2: group\.group\.telemetry\.workers\.0/);
    expect(refused({ ...group, group: { ...group.group, admin: true } })).toMatch(
      /^line 2: group\.group/,
    );
    expect(refused({ ...group, extra: 1 })).toMatch(/^line 2: group/);
    expect(parsePending("{not json\n", sha256Hex("{not json\n"))).toMatch(/line 1: not JSON/);

    expect(parseLedger("{")).toMatch(/not JSON/);
    expect(parseLedger('{"compactions":-1}')).toMatch(/compactions/);
    const bad = { ...room.ledger, pending: [{ file: "../../etc/passwd", sha256: digest }] };
    expect(parseLedger(JSON.stringify(bad))).toMatch(/pending/);
  });
});

describe("compaction for room: entities", () => {
  it("links the engrams its groups make to the registry, as a cycle does", () => {
    const registry = Registry.parse({
      people: [{ id: "ana", name: "Ana Silva", aliases: ["ana"] }],
      components: [{ id: "billing", name: "Billing", paths: ["src/billing/**"] }],
    });
    const slices = [0, 1, 2].map((k) =>
      Array.from({ length: 8 }, (_, i) =>
        memoryEvent(k * 8 + i + 1, {
          text: `@ana reworked billing retries, step ${i % 4}`,
          topics: [`t${i % 2}`],
        }),
      ),
    );
    let ledger = emptyLedger();
    const plans: ReturnType<typeof plan>[] = [];
    for (const part of slices) {
      const room = planRoomCompaction({
        slice: part,
        memory,
        registry,
        ledger,
        pendingFile: pendingFileName(ledger),
      });
      plans.push(room);
      ledger = room.ledger;
    }
    const linked = pendingEngrams(plans, memory, roomLinker(registry)).engrams;
    expect(linked.every((e) => e.entities?.includes("person:ana"))).toBe(true);
    const all = slices.flat();
    const cycle = compactSlice(all, slicePolicy(memory, roomLinker(registry), undefined));
    expect(linked.map(serializeEngram)).toEqual(cycle.map(serializeEngram));
  });
});
