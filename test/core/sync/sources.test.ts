import { describe, expect, it } from "vitest";
import { compactSlice } from "../../../src/core/compaction/compact.js";
import { emptyCatalog, sealEngram } from "../../../src/core/model/engram.js";
import { DEFAULT_THRESHOLDS } from "../../../src/core/sync/policy.js";
import { type SourceOptions, syncCandidates } from "../../../src/core/sync/sources.js";
import { Engram } from "../../../src/schema/engram.js";
import { engramBody, memoryEvent } from "../engine-fixtures.js";

const POLICY = {
  engram_max_bytes: 16_384,
  stall_seconds: 600,
  promote_min_confidence: 0.7,
  max_groups: 8,
};
const OPTIONS: SourceOptions = {
  thresholds: DEFAULT_THRESHOLDS,
  default_privacy: "private",
  default_confidence: 0.5,
  project: "demo",
};

describe("sync sources", () => {
  it("keeps notes with an outcome and a confidence as episodes, with their surprise", () => {
    const cases = [
      [0.9, "failure", true],
      [0.6, "success", true],
      [0.1, "success", true],
      [0.5, "partial", false],
      [0.2, "abandoned", false],
      [0.45, "partial", false],
    ] as const;
    const events = cases.map(([confidence, outcome], i) =>
      memoryEvent(i + 1, {
        kind: "lesson",
        text: `episode ${i}`,
        confidence,
        outcome,
        privacy: "public",
        topics: ["t"],
      }),
    );
    const engrams = compactSlice(events, POLICY);
    for (const e of engrams) expect(Engram.safeParse(e).success).toBe(true);
    const episodes = engrams.flatMap((e) => e.episodes ?? []);
    expect(episodes.map((e) => e.surprise)).toEqual([0.9, 0.4, 0.9, 0, 0.2, 0.05]);
    const candidates = syncCandidates(engrams, emptyCatalog(), OPTIONS).filter(
      (c) => c.item.type === "episode",
    );
    const byText = new Map(candidates.map((c) => [c.item.content, c.verdict.sync]));
    expect(cases.map((_, i) => byText.get(`episode ${i}`))).toEqual(cases.map((c) => c[2]));
    // Compaction is deterministic: the same events give the same episode ids.
    expect(compactSlice(events, POLICY)).toEqual(engrams);
  });

  it("leaves engrams without episodes byte for byte as before", () => {
    const engrams = compactSlice([memoryEvent(1), memoryEvent(2, { confidence: 0.9 })], POLICY);
    expect(engrams.every((e) => !("episodes" in e))).toBe(true);
  });

  it("counts evidence for insights and recurrences for patterns", () => {
    const withFact = (version: string, scope: "st" | "lt") =>
      sealEngram(
        engramBody({
          version,
          scope,
          privacy: "public",
          facts: ["Lesson: pin the node version"],
          signals: { ...engramBody().signals, mean_confidence: 0.8 },
          ...(scope === "lt" ? { supersedes: [] } : {}),
        }),
      );
    const st = ["20250101-000000Z", "20250102-000000Z", "20250103-000000Z"].map((v) =>
      withFact(v, "st"),
    );
    const pending = syncCandidates(st.slice(0, 2), emptyCatalog(), OPTIONS);
    const insight = pending.find((c) => c.item.type === "insight");
    expect(insight?.item.fields).toMatchObject({ evidence_count: 2, status: "pending" });
    expect(insight?.verdict.priority).toBe(2);
    const validated = syncCandidates(
      [...st, withFact("20250104-000000Z", "lt")],
      emptyCatalog(),
      OPTIONS,
    );
    expect(validated.find((c) => c.item.type === "insight")?.verdict.priority).toBe(1);
    const lesson = validated.find((c) => c.item.type === "pattern");
    expect(lesson?.item.fields).toMatchObject({ pattern_type: "lesson", frequency: 3 });
    expect(lesson?.verdict.sync).toBe(false);
    const evolution = validated.find((c) => c.item.type === "evolution");
    expect(evolution?.item).toMatchObject({ local_id: "gen_0", privacy: "private" });
  });
});

describe("sync sources: the current side only", () => {
  it("does not offer a decision or a convention a later engram replaced", () => {
    const OLD = "Use Postgres advisory locks for the job queue";
    const NEW = "Use Redis locks for the job queue";
    const RULE = "Convention: pipe the installer to sh";
    const RETRACT = "Retracted: do not pipe the installer to sh";
    const day = sealEngram(
      engramBody({
        version: "20250101-000000Z",
        decisions: [{ title: OLD, rationale: "simple" }],
        facts: [RULE, "The build uses tsc"],
      }),
    );
    const later = sealEngram(
      engramBody({
        version: "20250102-000000Z",
        decisions: [{ title: NEW, rationale: "faster" }],
        facts: [RETRACT],
        replaces: [
          { was: OLD, now: NEW },
          { was: RULE, now: RETRACT },
        ],
      }),
    );
    const titles = syncCandidates([day, later], emptyCatalog(), OPTIONS)
      .filter((c) => c.item.type === "insight")
      .map((c) => c.item.title);
    expect(titles).toContain(NEW);
    expect(titles).toContain(RETRACT);
    expect(titles).toContain("The build uses tsc");
    expect(titles).not.toContain(OLD);
    expect(titles).not.toContain(RULE);
  });
});
