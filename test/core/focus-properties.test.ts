import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FOCUS_DECISION_SHARE,
  focusCandidates,
  renderFocus,
  telemetryItemBudget,
} from "../../src/core/rendering/focus.js";
import { countFocusItems } from "../../src/core/rendering/focus-header.js";
import type { Engram } from "../../src/schema/engram.js";
import {
  catalogOf,
  checkShape,
  engram,
  linesBySort,
  mapOf,
  render,
  type Spec,
} from "./focus-fixtures.js";

const versionArb = fc
  .tuple(
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 23 }),
  )
  .map(
    ([m, d, h]) =>
      `2025${String(m).padStart(2, "0")}${String(d).padStart(2, "0")}-${String(h).padStart(2, "0")}0000Z`,
  );
const textArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 400 }),
  fc.lorem({ maxCount: 12 }),
  fc.constantFrom("dup fact", "DUP  fact", "line\nbreak", "- bullet", "<!-- x"),
);
const specArb: fc.Arbitrary<Spec> = fc.record({
  scope: fc.constantFrom("st" as const, "lt" as const),
  version: versionArb,
  facts: fc.array(textArb, { maxLength: 6 }),
  decisions: fc.array(
    fc.record({ title: textArb.filter((t) => t.length > 0), rationale: textArb }),
    {
      maxLength: 2,
    },
  ),
  privacy: fc.constantFrom("public" as const, "private" as const, "sensitive" as const),
  signals: fc.record({ lessons: fc.nat({ max: 2 }), incidents: fc.nat({ max: 1 }) }),
  errors: fc.array(
    fc.record({
      error_type: fc.constantFrom("TimeoutError", "timeouterror", "ENOENT", "Ω-error"),
      count: fc.integer({ min: 1, max: 1000 }),
      retryable: fc.constantFrom(true, false, null),
      sample: textArb,
    }),
    { maxLength: 3 },
  ),
});
const engramsArb = fc
  .array(specArb, { maxLength: 12 })
  .map((specs) => [...mapOf(specs.map(engram)).values()]);

describe("renderFocus: properties", () => {
  it("always stays within maxBytes and maxItems, and counts items and bytes truly", () => {
    fc.assert(
      fc.property(
        engramsArb,
        fc.integer({ min: 1, max: 4_000 }),
        fc.integer({ min: 0, max: 40 }),
        (engrams, maxBytes, maxItems) => {
          const view = render(engrams, maxBytes, maxItems);
          expect(view.bytes).toBe(Buffer.byteLength(view.text, "utf8"));
          expect(view.bytes).toBeLessThanOrEqual(maxBytes);
          expect(countFocusItems(view.text)).toBeLessThanOrEqual(maxItems);
          expect(view.items).toBe(countFocusItems(view.text));
          for (const line of view.text.split("\n")) expect(line).not.toMatch(/\s$/);
          expect(view.text === "" || view.text.endsWith("\n")).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is deterministic: shuffled input map, same bytes", () => {
    fc.assert(
      fc.property(engramsArb, fc.integer({ min: 200, max: 6_000 }), (engrams, maxBytes) => {
        const catalog = catalogOf(engrams);
        const a = renderFocus({ catalog, engrams: mapOf(engrams), maxBytes, maxItems: 30 });
        const b = renderFocus({
          catalog,
          engrams: mapOf([...engrams].reverse()),
          maxBytes,
          maxItems: 30,
        });
        const c = renderFocus({
          catalog: { ...catalog, entries: [...catalog.entries].reverse() },
          engrams: mapOf([...engrams].sort((x, y) => (x.hash < y.hash ? -1 : 1))),
          maxBytes,
          maxItems: 30,
        });
        expect(b).toEqual(a);
        expect(c).toEqual(a);
      }),
      { numRuns: 100 },
    );
  });

  it("decisions beside telemetry alone take the view: errors are not knowledge (fast-check's counterexample)", () => {
    const e = engram({
      privacy: "public",
      decisions: [
        { title: "Pin Node 22", rationale: "" },
        { title: "Ship on Fridays", rationale: "" },
      ],
      errors: [{ error_type: "TimeoutError", count: 1, retryable: false, sample: "timed out" }],
    });
    expect(decisionLines(render([e], 1_000_000, 2).text)).toHaveLength(2);
  });

  it("a smaller item budget shows a prefix of the items, by priority, telemetry within its share", () => {
    fc.assert(
      fc.property(engramsArb, fc.integer({ min: 0, max: 20 }), (engrams, maxItems) => {
        const full = render(engrams, 1_000_000, 1_000_000);
        expect(full.omitted).toBe(0);
        const cut = render(engrams, 1_000_000, maxItems);
        const fullLines = linesBySort(full.text);
        const cutLines = linesBySort(cut.text);
        // Decisions keep to their share when other knowledge is there to show.
        const decisions = decisionLines(full.text);
        const others = fullLines.knowledge.filter((l) => !decisions.includes(l));
        const room =
          others.length > 0 ? Math.ceil(maxItems * FOCUS_DECISION_SHARE) : Number.MAX_SAFE_INTEGER;
        const shared = fullLines.knowledge.filter(
          (l) => !decisions.includes(l) || decisions.indexOf(l) < room,
        );
        expect(cutLines.knowledge).toEqual(shared.slice(0, maxItems));
        expect(cutLines.telemetry).toEqual(
          fullLines.telemetry.slice(
            0,
            Math.min(telemetryItemBudget(maxItems), cutLines.telemetry.length),
          ),
        );
        expect(cutLines.telemetry.length).toBeLessThanOrEqual(telemetryItemBudget(maxItems));
        expect(cut.items + cut.omitted).toBe(full.items);
      }),
      { numRuns: 100 },
    );
  });

  it("never prints the content of sensitive engrams", () => {
    fc.assert(
      fc.property(engramsArb, (engrams) => {
        const marked = engrams.map((e, i) =>
          e.privacy === "sensitive"
            ? engram({ privacy: "sensitive", facts: [`TOPSECRET${i}`], version: e.version })
            : e,
        );
        const view = render(marked, 1_000_000, 1_000_000);
        expect(view.text).not.toContain("TOPSECRET");
      }),
      { numRuns: 50 },
    );
  });
});

describe("focusCandidates", () => {
  const lts = Array.from({ length: 6 }, (_, i) =>
    engram({
      scope: "lt",
      version: `202501${String(i + 10).padStart(2, "0")}-000000Z`,
      facts: [`lt ${i}`],
    }),
  );
  const sts = Array.from({ length: 6 }, (_, i) =>
    engram({
      scope: "st",
      version: `202502${String(i + 10).padStart(2, "0")}-000000Z`,
      facts: [`st ${i}`],
    }),
  );
  const catalog = catalogOf([...lts, ...sts]);

  it("returns everything, newest first, when the limit allows", () => {
    const got = focusCandidates(catalog, 100);
    expect(got.length).toBe(12);
    const versions = got.map((e) => e.version);
    expect(versions).toEqual([...versions].sort().reverse());
  });

  it("keeps the newest ST entries and at least half the slots for ST", () => {
    const got = focusCandidates(catalog, 5);
    expect(got.map((e) => e.scope)).toEqual(["st", "st", "st", "lt", "lt"]);
    expect(got.map((e) => e.version)).toEqual([
      "20250215-000000Z",
      "20250214-000000Z",
      "20250213-000000Z",
      "20250115-000000Z",
      "20250114-000000Z",
    ]);
  });

  it("gives unused ST slots to LT and the reverse", () => {
    expect(focusCandidates(catalogOf([...lts, sts[0] as Engram]), 4).map((e) => e.scope)).toEqual([
      "st",
      "lt",
      "lt",
      "lt",
    ]);
    expect(focusCandidates(catalogOf([lts[0] as Engram, ...sts]), 4).map((e) => e.scope)).toEqual([
      "st",
      "st",
      "st",
      "lt",
    ]);
    expect(focusCandidates(catalog, 0)).toEqual([]);
  });

  it("feeds renderFocus: rendering only the candidates stays valid", () => {
    const chosen = focusCandidates(catalog, 4);
    const all = mapOf([...lts, ...sts]);
    const engrams = new Map(chosen.map((e) => [e.engram_id, all.get(e.engram_id) as Engram]));
    const view = renderFocus({ catalog, engrams, maxBytes: 16_384, maxItems: 60 });
    checkShape(view, 16_384, 60);
    expect(view.items).toBe(4);
  });
});

/** Bullet lines of the Decisions section. */
function decisionLines(text: string): string[] {
  const out: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) inside = line === "## Decisions";
    else if (inside && line.startsWith("- ")) out.push(line);
  }
  return out;
}
