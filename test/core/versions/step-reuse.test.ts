import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { learningId } from "../../../src/core/graph/learnings.js";
import { loadMaster } from "../../../src/core/versions/documents.js";
import type { SessionItem } from "../../../src/core/versions/items.js";
import { knowledgeFromLearnings } from "../../../src/core/versions/master.js";
import {
  planSessionStep,
  type StepSettings,
  type StepState,
  type VersionStep,
} from "../../../src/core/versions/step.js";
import { endedSession, STEP_SETTINGS } from "../../support/version-steps.js";
import { catalogOf, engram, lt, mapOf, stNew, stOld } from "../focus-fixtures.js";

// Memory with engrams: every version of a run repeats their catalog entries and focus items.
const engrams = [
  lt,
  stOld,
  stNew,
  ...Array.from({ length: 12 }, (_, i) =>
    engram({
      scope: i % 3 === 0 ? "lt" : "st",
      version: `202502${String(i + 1).padStart(2, "0")}-000000Z`,
      facts: [`Fact ${i}`, "Shared fact"],
    }),
  ),
];
const catalog = catalogOf(engrams, 7);
const settings: StepSettings = {
  ...STEP_SETTINGS,
  engrams: mapOf(engrams),
  focus: { memory_md_max_bytes: 4_096, memory_md_max_items: 6 },
  learnings: knowledgeFromLearnings(
    [{ id: learningId("Fact 3"), type: "insight", text: "Fact 3", rationale: null, evidence: 1 }],
    7,
  ),
};

function start(): StepState {
  return { catalog, loaded: loadMaster(7, [], new Map()), log: [] };
}

/** The step's state as a step of its own run would get it: nothing carried over. */
function fresh(state: StepState): StepState {
  const { forms: _forms, focus: _focus, ...rest } = state;
  return rest;
}

function run(items: Partial<SessionItem>[][], carry: boolean): VersionStep[] {
  const steps: VersionStep[] = [];
  let state = start();
  items.forEach((list, i) => {
    const session = endedSession(`s_${String(i).padStart(16, "0")}`, 7, list);
    const step = planSessionStep(state, session, settings);
    steps.push(step);
    state = carry ? step.state : fresh(step.state);
  });
  return steps;
}

const itemArb: fc.Arbitrary<Partial<SessionItem>> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("fact" as const, "lesson" as const),
    text: fc.constantFrom("Fact 3", "Shared fact", "A new fact", "Another one"),
    confidence: fc.constantFrom(0.5, 0.9),
  }),
  fc.record({
    kind: fc.constant("state" as const),
    key: fc.constantFrom("build", "deploy"),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
  fc.record({
    kind: fc.constant("episode" as const),
    text: fc.string({ maxLength: 10 }),
    outcome: fc.constant("success" as const),
    confidence: fc.constant(0.6),
  }),
);

describe("a run's steps share what they compute of the engrams", () => {
  it("write exactly the files of steps that computed everything again", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(itemArb, { maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        (items) => {
          const carried = run(items, true);
          const alone = run(items, false);
          expect(carried.map((s) => s.files)).toEqual(alone.map((s) => s.files));
          expect(carried.map((s) => s.record)).toEqual(alone.map((s) => s.record));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("computes them once per run", () => {
    const steps = run([[{ text: "One" }], [{ text: "Two" }], [{ text: "Three" }]], true);
    const [first, ...rest] = steps.map((s) => s.state);
    for (const state of rest) {
      expect(state.forms).toBe(first?.forms);
      expect(state.focus).toBe(first?.focus);
    }
    const memory = steps[2]?.files.writes.find((w) => w.path === "MEMORY.md")?.text;
    expect(memory).toContain(`version 10 hash ${steps[2]?.record.catalog_hash}`);
  });
});
