import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { packEngrams } from "../../src/core/compaction/pack.js";
import { engramFileSize } from "../../src/core/model/engram.js";
import type { EngramBody, Episode } from "../../src/schema/engram.js";
import { engramBody } from "./engine-fixtures.js";

/**
 * Extras (telemetry, episodes, sealed notes, links) larger than an engram are spread over
 * parts that each fit: nothing is dropped for size, and the events are counted once.
 */
type Telemetry = NonNullable<EngramBody["telemetry"]>;

const arbWorker = fc.record({
  worker: fc.stringMatching(/^w[0-9]{1,3}$/),
  heartbeats: fc.nat(99),
  progress_events: fc.nat(99),
  stages: fc.array(fc.constantFrom("plan", "build", "blocked"), { maxLength: 4 }),
  first_ts: fc.constant("2026-01-05T10:00:00Z"),
  last_ts: fc.constant("2026-01-05T10:09:00Z"),
  active_seconds: fc.nat(600),
  longest_gap_seconds: fc.nat(600),
  stalled: fc.boolean(),
});
const arbError = fc.record({
  error_type: fc.constantFrom("timeout", "oom", "lint"),
  count: fc.integer({ min: 1, max: 50 }),
  retryable: fc.constantFrom(true, false, null),
  sample: fc.string({ maxLength: 280 }),
  workers: fc.array(fc.stringMatching(/^w[0-9]{1,3}$/), { maxLength: 5 }),
});

const arbEpisode = fc.record({
  id: fc.stringMatching(/^ep_[0-9a-f]{24}$/),
  at: fc.constant("2026-01-05T10:00:00.000Z"),
  kind: fc.constantFrom("lesson", "fact"),
  sender: fc.stringMatching(/^w[0-9]{1,3}$/),
  outcome: fc.constantFrom("success" as const, "failure" as const),
  confidence: fc.constantFrom(0.2, 0.9),
  surprise: fc.constantFrom(0.1, 0.7),
  privacy: fc.constant("private" as const),
  text: fc.string({ minLength: 0, maxLength: 1000 }),
}) as fc.Arbitrary<Episode>;

describe("packEngrams, extras larger than an engram", () => {
  it("spreads them over parts that each fit, losing none of them", () => {
    fc.assert(
      fc.property(
        fc.array(arbWorker, { maxLength: 64 }),
        fc.array(arbError, { maxLength: 32 }),
        fc.array(arbEpisode, { maxLength: 32 }),
        fc.array(fc.stringMatching(/^src\/[a-z]{1,30}\.ts$/), { maxLength: 40 }),
        fc.array(fc.stringMatching(/^w[0-9]{1,3}$/), { maxLength: 20 }),
        fc.array(fc.string({ minLength: 1, maxLength: 300 }), { maxLength: 30 }),
        fc.integer({ min: 3000, max: 8000 }),
        (workers, errors, episodes, files, senders, facts, maxBytes) => {
          const telemetry: Telemetry = { workers, errors };
          const base = engramBody({
            links: files.map((ref) => ({ type: "file" as const, ref })),
            provenance: {
              created_by: "test",
              run_id: "r",
              event_count: 7,
              senders,
              message_types: {},
            },
          });
          const engrams = packEngrams(
            base,
            { telemetry, episodes },
            { facts, decisions: [], tentative: [] },
            [],
            maxBytes,
          );
          for (const e of engrams) {
            const { engram_id: _, hash: __, ...body } = e;
            expect(engramFileSize(body)).toBeLessThanOrEqual(maxBytes);
            expect(e.signals.truncated).toBe(0);
          }
          const all = <T>(pick: (e: (typeof engrams)[number]) => T[] | undefined) =>
            engrams.flatMap((e) => pick(e) ?? []);
          expect(all((e) => e.telemetry?.workers)).toEqual(workers);
          expect(all((e) => e.telemetry?.errors)).toEqual(errors);
          expect(all((e) => e.episodes)).toEqual(episodes);
          expect(all((e) => e.facts)).toEqual(facts);
          expect(new Set(all((e) => e.links).map((l) => l.ref))).toEqual(new Set(files));
          expect(engrams.reduce((n, e) => n + e.provenance.event_count, 0)).toBe(7);
          expect(engrams.map((e) => e.provenance.part)).toEqual(
            engrams.map((_, i) => (i === 0 ? undefined : i + 1)),
          );
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("packEngrams, many parts", () => {
  it("packs a group into more than ten parts that each fit, numbered in order, every fact once", () => {
    const facts = Array.from(
      { length: 240 },
      (_, i) =>
        `fact ${i}: the cache key of tenant ${i % 17} ignores the region ${"x".repeat(i % 90)}`,
    );
    const base = engramBody({
      links: Array.from({ length: 12 }, (_, i) => ({ type: "file" as const, ref: `src/m${i}.ts` })),
      provenance: {
        created_by: "test",
        run_id: "r",
        event_count: 240,
        senders: ["w1", "w2", "w3"],
        message_types: {},
      },
    });
    const maxBytes = 3000;
    const engrams = packEngrams(base, {}, { facts, decisions: [], tentative: [] }, [], maxBytes);
    expect(engrams.length).toBeGreaterThan(10);
    for (const e of engrams) {
      const { engram_id: _, hash: __, ...body } = e;
      expect(engramFileSize(body)).toBeLessThanOrEqual(maxBytes);
    }
    expect(engrams.flatMap((e) => e.facts)).toEqual(facts);
    expect(engrams.map((e) => e.provenance.part)).toEqual(
      engrams.map((_, i) => (i === 0 ? undefined : i + 1)),
    );
  });
});
