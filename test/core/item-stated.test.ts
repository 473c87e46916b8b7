/**
 * Each fact's and decision's own confidence and outcome (issue 36): notes compacted into one
 * engram keep what each stated, through room records, parts and promotion, and readers
 * (learnings, recall) show the item's own, never the engram's mean in its place.
 */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { collectGroup, packGroup } from "../../src/core/compaction/group.js";
import { joinGroups } from "../../src/core/compaction/group-join.js";
import { planPromotion } from "../../src/core/compaction/promote.js";
import { learningIdOfFact, learningsOf } from "../../src/core/graph/learnings.js";
import { serializeEngram } from "../../src/core/model/engram.js";
import { notesOfEngram } from "../../src/core/recall/notes.js";
import { Engram } from "../../src/schema/engram.js";
import { memoryEvent } from "./engine-fixtures.js";

const policy = {
  engram_max_bytes: 16384,
  stall_seconds: 300,
  promote_min_confidence: 0.5,
  max_groups: 24,
};
const SURE = "Keep the retry budget at three";
const UNSURE = "Ship the parser behind a flag";
const LESSON = "The webhook retries twice";

const events = [
  memoryEvent(1, {
    kind: "decision",
    text: SURE,
    confidence: 0.9,
    outcome: "success",
    topics: ["ci"],
  }),
  memoryEvent(2, {
    kind: "decision",
    text: UNSURE,
    confidence: 0.75,
    outcome: "failure",
    topics: ["ci"],
  }),
  memoryEvent(3, {
    kind: "lesson",
    text: LESSON,
    confidence: 0.6,
    outcome: "partial",
    topics: ["ci"],
  }),
  memoryEvent(4, { kind: "lesson", text: "Plain lesson without a confidence", topics: ["ci"] }),
];

const id = (text: string) => learningIdOfFact(text);

function stated(engrams: readonly Engram[]) {
  const out: Record<string, { confidence?: number; outcome?: string }> = {};
  for (const l of learningsOf(engrams)) {
    out[l.text] = {
      ...(l.confidence !== null && l.confidence !== undefined ? { confidence: l.confidence } : {}),
      ...(l.outcome !== undefined ? { outcome: l.outcome } : {}),
    };
  }
  return out;
}

const EXPECTED = {
  [SURE]: { confidence: 0.9, outcome: "success" },
  [UNSURE]: { confidence: 0.75, outcome: "failure" },
  [LESSON]: { confidence: 0.6, outcome: "partial" },
  "Plain lesson without a confidence": {},
};

describe("each item's own confidence and outcome", () => {
  it("is recorded per item in one engram, and read back by learnings and recall", () => {
    const [engram] = compactSlice(events, policy) as [Engram];
    expect(Engram.safeParse(engram).success).toBe(true);
    expect(engram.decisions).toEqual([
      { title: SURE, rationale: "", confidence: 0.9 },
      { title: UNSURE, rationale: "", confidence: 0.75 },
    ]);
    // A decision's confidence is on the decision; said_by holds the rest.
    expect(engram.said_by).toEqual({
      [id(SURE)]: { outcome: "success" },
      [id(UNSURE)]: { outcome: "failure" },
      [id(`Lesson: ${LESSON}`)]: { confidence: 0.6, outcome: "partial" },
    });
    expect(stated([engram])).toEqual(EXPECTED);
    const notes = notesOfEngram(engram);
    const of = (text: string) => notes.find((n) => n.text === text && n.kind !== "episode");
    expect(of(SURE)).toMatchObject({ confidence: 0.9, outcome: "success" });
    expect(of(UNSURE)).toMatchObject({ confidence: 0.75, outcome: "failure" });
    expect(of(LESSON)).toMatchObject({ confidence: 0.6, outcome: "partial" });
    expect(of("Plain lesson without a confidence")?.confidence).toBeUndefined();
  });

  it("keeps the first stated when a note is said again, and across room records", () => {
    const again = memoryEvent(5, {
      kind: "lesson",
      text: LESSON,
      confidence: 0.95,
      outcome: "success",
      topics: ["ci"],
    });
    const whole = collectGroup("ci", [...events, again], policy);
    const joined = joinGroups([
      collectGroup("ci", events.slice(0, 2), policy),
      collectGroup("ci", [...events.slice(2), again], policy),
    ]);
    const a = packGroup(whole, "20261122-100000Z", policy);
    const b = packGroup(joined, "20261122-100000Z", policy);
    expect(b.map(serializeEngram)).toEqual(a.map(serializeEngram));
    expect(stated(a)).toEqual(EXPECTED);
  });

  it("survives parts: an engram split for room keeps each item's own", () => {
    const many = [
      ...events,
      ...Array.from({ length: 40 }, (_, i) =>
        memoryEvent(10 + i, { kind: "lesson", text: `filler lesson ${i} ${"x".repeat(80)}` }),
      ),
    ];
    const parts = compactSlice(
      many.map((e) => ({ ...e, topics: ["ci"] })),
      { ...policy, engram_max_bytes: 2048 },
    );
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(Engram.safeParse(part).success).toBe(true);
    const got = stated(parts);
    for (const [text, want] of Object.entries(EXPECTED)) expect(got[text]).toEqual(want);
  });

  it("survives promotion: the LT engram's items keep their own, not the mean", () => {
    const [engram] = compactSlice(events, policy) as [Engram];
    const lt = planPromotion({
      st: [engram],
      lt: [],
      recalls: new Map([[engram.engram_id, 5]]),
      version: "20261123-000000Z",
      createdAt: "2026-11-23T00:00:00.000Z",
      policy: {
        promote_repeat_min: 3,
        promote_recall_min: 5,
        promote_decisions: true,
        promote_min_confidence: 0.5,
        engram_max_bytes: 65_536,
      },
    });
    expect(lt).toHaveLength(1);
    const promoted = lt[0] as Engram;
    expect(promoted.scope).toBe("lt");
    expect(stated([promoted])).toEqual(EXPECTED);
    expect(stated([promoted, engram])).toEqual(EXPECTED);
  });

  it("reads an engram written before items kept theirs: the mean stands in", () => {
    const [engram] = compactSlice(events.slice(2), policy) as [Engram];
    const old = { ...engram };
    delete old.said_by;
    expect(Engram.safeParse(old).success).toBe(true);
    expect(stated([old])[LESSON]).toEqual({ confidence: old.signals.mean_confidence });
  });
});
