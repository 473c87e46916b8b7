import { describe, expect, it } from "vitest";
import { emptyCatalog, sealEngram } from "../../../src/core/model/engram.js";
import { DEFAULT_THRESHOLDS } from "../../../src/core/sync/policy.js";
import { type SourceOptions, syncCandidates } from "../../../src/core/sync/sources.js";
import { replacedInsightIds, withdrawnInsight } from "../../../src/core/sync/withdraw.js";
import type { Engram } from "../../../src/schema/engram.js";
import { engramBody } from "../engine-fixtures.js";

const OPTIONS: SourceOptions = {
  thresholds: DEFAULT_THRESHOLDS,
  default_privacy: "private",
  default_confidence: 0.5,
  project: "demo",
};

const OLD = "Lesson: take a Postgres advisory lock before each migration";
const NOW = "Lesson: take a Redis lock before each migration, not a Postgres advisory lock";

function engram(version: string, facts: string[], replaces?: { was: string; now: string }[]) {
  return sealEngram(
    engramBody({
      version,
      privacy: "public",
      facts,
      signals: { ...engramBody().signals, mean_confidence: 0.8 },
      ...(replaces !== undefined ? { replaces } : {}),
    }),
  );
}

/** The replaced insights, beside the insights the sync sources offer (the current side). */
function replaced(engrams: readonly Engram[]): string[] {
  const offered = syncCandidates(engrams, emptyCatalog(), OPTIONS)
    .filter((c) => c.item.type === "insight")
    .map((c) => c.item.local_id);
  return replacedInsightIds(engrams, OPTIONS, new Set(offered));
}

describe("withdrawing replaced insights from a store", () => {
  it("names nothing while no engram replaces anything", () => {
    const engrams = [engram("20250101-000000Z", [OLD]), engram("20250102-000000Z", [NOW])];
    expect(replaced(engrams)).toEqual([]);
  });

  it("names the insight only the replaced side states, not the current one", () => {
    const before = [engram("20250101-000000Z", [OLD, "Lesson: keep migrations small"])];
    const after = [...before, engram("20250102-000000Z", [NOW], [{ was: OLD, now: NOW }])];
    const withdrawn = replaced(after);
    expect(withdrawn).toHaveLength(1);
    // The withdrawn id is the old lesson's own insight id, as the store got it before.
    const oldId = replaced([
      engram("20250101-000000Z", [OLD]),
      engram("20250102-000000Z", [NOW], [{ was: OLD, now: NOW }]),
    ]);
    expect(withdrawn).toEqual(oldId);
  });

  it("makes one removal item per insight, the same whenever it is made", () => {
    const item = withdrawnInsight("ins_abc");
    expect(item).toEqual(withdrawnInsight("ins_abc"));
    expect(item.item).toMatchObject({ type: "insight", local_id: "ins_abc", content: "" });
    expect(item.item.fields).toMatchObject({ status: "removed", local_id: "ins_abc" });
    expect(item.verdict.sync).toBe(true);
  });
});
