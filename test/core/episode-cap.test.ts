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
  it("spreads them over parts of at most 32, none left out, in the order they happened", () => {
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
    for (const e of engrams) expect((e.episodes ?? []).length).toBeLessThanOrEqual(32);
    const episodes = engrams.flatMap((e) => e.episodes ?? []);
    expect(episodes).toHaveLength(45);
    expect(episodes.filter((e) => e.outcome === "failure")).toHaveLength(5);
    // Each part in the order they happened, and the parts in that order too.
    const parts = engrams.filter((e) => (e.episodes ?? []).length > 0);
    const ordered = [...parts].sort(
      (a, b) => (Number(a.provenance.part) || 1) - (Number(b.provenance.part) || 1),
    );
    const times = ordered.flatMap((e) => (e.episodes ?? []).map((ep) => ep.at));
    expect(times).toEqual([...times].sort());
    expect(Math.max(...engrams.map((e) => e.signals.max_surprise ?? 0))).toBeCloseTo(0.9);
    // The group's events are counted once, on its first part.
    expect(engrams.reduce((n, e) => n + e.provenance.event_count, 0)).toBe(45);
  });

  it("keeps 100 high-surprise notes with their own topics, past the slice's 24 groups", () => {
    const events = Array.from({ length: 100 }, (_, i) =>
      memoryEvent(i + 1, {
        text: `the canary for service ${i} failed`,
        outcome: "failure",
        confidence: 0.95,
        topics: [`service-${i}`],
      }),
    );
    const engrams = compactSlice(events, policy);
    const ids = new Set(engrams.flatMap((e) => (e.episodes ?? []).map((ep) => ep.id)));
    expect(ids.size).toBe(100);
    for (const e of engrams) expect((e.episodes ?? []).length).toBeLessThanOrEqual(32);
  });

  it("keeps every episode when they fit", () => {
    const events = Array.from({ length: 10 }, (_, i) =>
      memoryEvent(i + 1, { text: `step ${i}`, outcome: "success", confidence: 0.8 }),
    );
    expect(compactSlice(events, policy).flatMap((e) => e.episodes ?? [])).toHaveLength(10);
  });
});
