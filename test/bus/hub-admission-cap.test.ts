/** The TCP hub's connection cap against the open-files limit (issue 40). */
import { describe, expect, it } from "vitest";
import { capFor, REFUSING_MAX } from "../../src/bus/hub-admission.js";

describe("capFor", () => {
  it("keeps the configured cap where the limit holds it, and where the limit is unknown", () => {
    expect(capFor(512, { limit: 65_536, open: 30 })).toEqual({ cap: 512, refusing: REFUSING_MAX });
    expect(capFor(512, undefined)).toEqual({ cap: 512, refusing: REFUSING_MAX });
  });

  it("lowers it so that connections and refusals fit in the descriptors left, with some to spare", () => {
    const { cap, refusing } = capFor(1000, { limit: 160, open: 30 });
    expect(cap).toBeLessThan(1000);
    expect(cap + refusing + 30).toBeLessThanOrEqual(160 - 32);
    expect(cap).toBeGreaterThan(0);
  });

  it("still lets one worker in under a limit with nothing to spare", () => {
    expect(capFor(512, { limit: 64, open: 60 })).toEqual({ cap: 1, refusing: 1 });
  });
});
