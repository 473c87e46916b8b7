import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { packEngrams } from "../../src/core/compaction/pack.js";
import { engramFileSize, sealEngram } from "../../src/core/model/engram.js";
import type { Engram, EngramBody } from "../../src/schema/engram.js";
import { engramBody } from "./engine-fixtures.js";

type Telemetry = NonNullable<EngramBody["telemetry"]>;

/** What the trim means: drop the last item of each list in turn until the engram fits. */
function trimOneAtATime(body: EngramBody, maxBytes: number): Engram {
  const next = structuredClone(body);
  next.signals.truncated += 1;
  const fits = () => engramFileSize(next) <= maxBytes;
  const lists: (() => unknown[] | undefined)[] = [
    () => next.telemetry?.workers,
    () => next.telemetry?.errors,
    () => next.entities,
    () => next.links,
    () => next.sealed,
    () => next.provenance.senders,
  ];
  for (const [i, list] of lists.entries()) {
    while (!fits() && (list()?.length ?? 0) > 0) list()?.pop();
    if (i === 1 && next.telemetry?.workers.length === 0 && next.telemetry.errors.length === 0) {
      delete next.telemetry;
    }
    if (i === 2 && next.entities?.length === 0) delete next.entities;
  }
  return sealEngram(next);
}

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

describe("packEngrams, extras larger than an engram", () => {
  it("keeps what dropping the last item one at a time would keep, and fits when it can", () => {
    fc.assert(
      fc.property(
        fc.array(arbWorker, { maxLength: 64 }),
        fc.array(arbError, { maxLength: 32 }),
        fc.array(fc.stringMatching(/^file:src\/[a-z]{1,12}\.ts$/), { maxLength: 20 }),
        fc.array(fc.stringMatching(/^src\/[a-z]{1,30}\.ts$/), { maxLength: 40 }),
        fc.array(fc.stringMatching(/^w[0-9]{1,3}$/), { maxLength: 40 }),
        fc.integer({ min: 600, max: 8000 }),
        (workers, errors, entities, files, senders, maxBytes) => {
          const telemetry: Telemetry = { workers, errors };
          const base = engramBody({
            links: files.map((ref) => ({ type: "file" as const, ref })),
            provenance: {
              created_by: "test",
              run_id: "r",
              event_count: 1,
              senders,
              message_types: {},
            },
          });
          const links = {
            evidence: {},
            origins: new Map(),
            entities: () => entities,
          };
          const [engram, ...rest] = packEngrams(
            base,
            { telemetry },
            { facts: [], decisions: [], tentative: [] },
            [],
            maxBytes,
            links,
          );
          expect(rest).toEqual([]);
          const untrimmed: EngramBody = {
            ...base,
            telemetry,
            ...(entities.length > 0 ? { entities } : {}),
          };
          if (engramFileSize(untrimmed) <= maxBytes) {
            expect(engram?.signals.truncated).toBe(0);
            return;
          }
          expect(engram).toEqual(trimOneAtATime(untrimmed, maxBytes));
          const { engram_id: _, hash: __, ...body } = engram as Engram;
          const floor = engramBody({ signals: { ...base.signals, truncated: 1 } });
          if (engramFileSize(floor) <= maxBytes) {
            expect(engramFileSize(body)).toBeLessThanOrEqual(maxBytes);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
