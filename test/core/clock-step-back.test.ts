/**
 * A Director's clock can step back: a state folder restored on a machine whose clock is
 * behind, or an earlier SOURCE_DATE_EPOCH. The buffer then holds events received "later"
 * before events received "earlier", and the engram made of them must still be one its readers
 * accept (a window whose start is after its end stopped every run for good).
 */
import { describe, expect, it } from "vitest";
import { compactSlice, sliceVersion } from "../../src/core/compaction/compact.js";
import { Engram } from "../../src/schema/engram.js";
import { memoryEvent } from "./engine-fixtures.js";

const policy = {
  engram_max_bytes: 16384,
  stall_seconds: 600,
  promote_min_confidence: 0.7,
  max_groups: 24,
};

describe("compaction when the Director's clock stepped back", () => {
  it("spans the window from the earliest to the latest receipt, whatever their order", () => {
    const events = [
      memoryEvent(1, {
        received_at: "2023-11-14T22:13:20.000Z",
        text: "The build takes 3 minutes",
      }),
      memoryEvent(2, {
        received_at: "2020-09-13T12:26:40.000Z",
        text: "The deploy takes 9 minutes",
      }),
      memoryEvent(3, { received_at: "2021-01-01T00:00:00.000Z", text: "The lint takes 1 minute" }),
    ];
    const engrams = compactSlice(events, policy);
    expect(engrams.length).toBeGreaterThan(0);
    for (const engram of engrams) {
      expect(Engram.safeParse(engram).success).toBe(true);
      expect(engram.source_window).toEqual({
        start_ts: "2020-09-13T12:26:40.000Z",
        end_ts: "2023-11-14T22:13:20.000Z",
      });
      expect(engram.created_at).toBe("2023-11-14T22:13:20.000Z");
    }
    expect(sliceVersion(events)).toBe("20231114-221320Z");
  });
});
