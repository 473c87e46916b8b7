import { describe, expect, it } from "vitest";
import { planPromotion } from "../../src/core/compaction/promote.js";
import { learningIdOfFact } from "../../src/core/graph/learnings.js";
import { sealEngram } from "../../src/core/model/engram.js";
import type { Engram, EngramBody } from "../../src/schema/engram.js";
import { engramBody } from "./engine-fixtures.js";

const POLICY = {
  promote_repeat_min: 3,
  promote_recall_min: 5,
  promote_decisions: true,
  promote_min_confidence: 0.7,
  engram_max_bytes: 65_536,
};

function st(fields: Partial<EngramBody>): Engram {
  return sealEngram({ ...engramBody({ version: "20250101-000000Z" }), ...fields });
}

function promotedDecisions(engrams: readonly Engram[], lt: readonly Engram[] = []) {
  const out = planPromotion({
    st: engrams,
    lt,
    recalls: new Map(),
    version: "20250102-000000Z",
    createdAt: "2025-01-02T00:00:00.000Z",
    policy: POLICY,
  });
  return { decisions: out.flatMap((e) => e.decisions), engrams: out };
}

describe("promotion of decisions", () => {
  it("leaves a decision below promote_min_confidence short-term, and keeps confidence when promoting", () => {
    const day = st({
      decisions: [
        { title: "Keep the cache in memory", rationale: "", confidence: 0.5 },
        { title: "Store payloads for 30 days", rationale: "", confidence: 0.9 },
        { title: "Name branches by issue", rationale: "" },
      ],
    });
    const { decisions } = promotedDecisions([day]);
    expect(decisions).toHaveLength(2);
    expect(decisions).toEqual(
      expect.arrayContaining([
        { title: "Name branches by issue", rationale: "" },
        { title: "Store payloads for 30 days", rationale: "", confidence: 0.9 },
      ]),
    );
  });

  it("promotes an unsure decision once it is stated again, with the confidence it was stated with", () => {
    const title = "Keep the cache in memory";
    const day = st({ decisions: [{ title, rationale: "", confidence: 0.5 }] });
    const again = st({
      version: "20250101-000100Z",
      facts: ["Lesson: something else"],
      evidence: { [learningIdOfFact(title)]: 1 },
    });
    const { decisions, engrams } = promotedDecisions([day, again]);
    expect(decisions).toEqual([{ title, rationale: "", confidence: 0.5 }]);
    expect(engrams[0]?.promotion?.reasons).toContain(
      `explicit decision, confirmed 1 time: ${title}`,
    );
  });

  it("never carries forward what a later item replaced, and carries the replacement's pair", () => {
    const old = "Use Postgres advisory locks";
    const now = "Use Redis locks instead of Postgres advisory locks";
    const day = st({ decisions: [{ title: old, rationale: "" }] });
    const next = st({
      version: "20250101-000100Z",
      decisions: [{ title: now, rationale: "" }],
      replaces: [{ was: old, now }],
    });
    const { decisions, engrams } = promotedDecisions([day, next]);
    expect(decisions.map((d) => d.title)).toEqual([now]);
    expect(engrams[0]?.replaces).toEqual([{ was: old, now }]);
  });
});
