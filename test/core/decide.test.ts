import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideCompaction } from "../../src/core/compaction/decide.js";
import { defaultConfig, type MemoryConfig } from "../../src/schema/config.js";

const memory = (over: Partial<MemoryConfig> = {}): MemoryConfig => ({
  ...defaultConfig().memory,
  ...over,
});

describe("decideCompaction", () => {
  it("takes only the oldest events, keeps the newest window, and lands at the low-water mark", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 50, max: 2000 }), { maxLength: 400 }),
        fc.integer({ min: 10, max: 300 }),
        fc.integer({ min: 0, max: 50 }),
        fc.boolean(),
        (sizes, maxEvents, keep, force) => {
          const m = memory({
            buffer_max_events: maxEvents,
            buffer_max_bytes: maxEvents * 800,
            buffer_keep_recent_events: keep,
          });
          const total = sizes.reduce((a, b) => a + b, 0);
          const d = decideCompaction(
            { eventBytes: sizes, totalBytes: total },
            m,
            undefined,
            "2026-11-22T10:00:00Z",
            force,
          );
          expect(d.take).toBeGreaterThanOrEqual(0);
          expect(sizes.length - d.take).toBeGreaterThanOrEqual(Math.min(keep, sizes.length));
          const overHard = sizes.length > maxEvents || total > m.buffer_max_bytes;
          // The config loader guarantees the newest window fits well inside the budgets.
          const windowFits = keep < maxEvents * m.buffer_low_water_ratio;
          if (overHard && !force && windowFits && sizes.length > keep) {
            expect(d.reason).toBe("hard-limit");
            const rest = sizes.slice(d.take);
            const restBytes = rest.reduce((a, b) => a + b, 0);
            const atLow =
              rest.length <= maxEvents * m.buffer_low_water_ratio &&
              restBytes <= m.buffer_max_bytes * m.buffer_low_water_ratio;
            // Either at the low-water mark, or stopped by the newest window.
            expect(atLow || rest.length === keep).toBe(true);
          }
        },
      ),
    );
  });

  it("rate-limits soft-triggered compaction but never a hard one", () => {
    const m = memory({
      buffer_max_events: 100,
      buffer_keep_recent_events: 5,
      compaction_min_interval_seconds: 300,
    });
    const shape = (n: number) => ({ eventBytes: Array(n).fill(100), totalBytes: n * 100 });
    expect(
      decideCompaction(shape(90), m, "2026-11-22T09:59:00Z", "2026-11-22T10:00:00Z", false).reason,
    ).toBe("rate-limited");
    expect(
      decideCompaction(shape(90), m, "2026-11-22T09:50:00Z", "2026-11-22T10:00:00Z", false).reason,
    ).toBe("soft-limit");
    expect(
      decideCompaction(shape(101), m, "2026-11-22T09:59:59Z", "2026-11-22T10:00:00Z", false).reason,
    ).toBe("hard-limit");
    expect(decideCompaction(shape(50), m, undefined, "2026-11-22T10:00:00Z", false).take).toBe(0);
  });
});
