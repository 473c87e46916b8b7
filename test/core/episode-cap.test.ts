import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { memoryEvent } from "./engine-fixtures.js";

const policy = {
  engram_max_bytes: 1_000_000,
  stall_seconds: 600,
  promote_min_confidence: 0.7,
  max_groups: 24,
};

describe("an engram's episodes past its cap", () => {
  it("keeps the ones the sync policy sends first, in the order they happened", () => {
    // 40 routine episodes (0.5 partial: no surprise, not confident), then 5 surprises.
    const events = [
      ...Array.from({ length: 40 }, (_, i) =>
        memoryEvent(i + 1, { text: `routine step ${i}`, outcome: "partial", confidence: 0.5 }),
      ),
      ...Array.from({ length: 5 }, (_, i) =>
        memoryEvent(41 + i, { text: `surprise ${i}`, outcome: "failure", confidence: 0.9 }),
      ),
    ];
    const engrams = compactSlice(events, policy);
    const episodes = engrams.flatMap((e) => e.episodes ?? []);
    expect(episodes).toHaveLength(32);
    const surprises = episodes.filter((e) => e.outcome === "failure");
    expect(surprises).toHaveLength(5);
    // Chronological: the routine ones kept are the earliest, and all come before the surprises.
    expect(episodes.map((e) => e.at)).toEqual([...episodes.map((e) => e.at)].sort());
    expect(Math.max(...engrams.map((e) => e.signals.max_surprise ?? 0))).toBeCloseTo(0.9);
  });

  it("keeps every episode when they fit", () => {
    const events = Array.from({ length: 10 }, (_, i) =>
      memoryEvent(i + 1, { text: `step ${i}`, outcome: "success", confidence: 0.8 }),
    );
    expect(compactSlice(events, policy).flatMap((e) => e.episodes ?? [])).toHaveLength(10);
  });
});
