import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LinkedLearning } from "../../src/core/graph/entities.js";
import { freshnessOf, freshnessOfAll, isoSeconds } from "../../src/core/graph/freshness.js";
import { learningId } from "../../src/core/graph/learnings.js";

function linked(text: string, entities: string[]): LinkedLearning {
  return {
    id: learningId(text),
    type: "insight",
    text,
    rationale: null,
    engrams: ["e_0"],
    scope: "st",
    evidence: 1,
    written_at: "2026-01-01T00:00:00Z",
    topics: [],
    links: [],
    senders: [],
    entities,
    unlinked: [],
  };
}

// From 1900 to beyond 9999, where ISO-8601 takes the six-digit year.
const seconds = fc.integer({ min: -2_208_988_800, max: 260_000_000_000 });

describe("freshness of all learnings", () => {
  it("formats times as Date does, to the second", () => {
    fc.assert(
      fc.property(seconds, (s) => {
        expect(isoSeconds(s)).toBe(new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"));
      }),
    );
  });

  it("gives each learning what freshnessOf gives it alone", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(seconds, fc.option(seconds, { nil: undefined })), { maxLength: 30 }),
        seconds,
        fc.integer({ min: 1, max: 400 }),
        (rows, now, thresholdDays) => {
          const learnings = rows.map((_, i) => linked(`fact ${i}`, [`file:f${i}`]));
          const confirmedOf = (l: LinkedLearning) => ({
            at: (rows[learnings.indexOf(l)] as [number, number | undefined])[0],
            by: "merge" as const,
          });
          const activityOf = (entity: string) => {
            const at = (rows[Number(entity.slice(6))] as [number, number | undefined])[1];
            return at === undefined ? undefined : { at, detail: "commit" };
          };
          const options = { now, thresholdDays };
          expect(freshnessOfAll(learnings, confirmedOf, activityOf, options)).toEqual(
            learnings.map((l) => freshnessOf(l, confirmedOf(l), activityOf, options)),
          );
        },
      ),
    );
  });
});
