/**
 * Ids made without node:crypto (src/state/random-id.ts, start-up): an envelope's event id
 * keeps the shape `crypto.randomUUID()` gave it, and ids do not repeat.
 */
import { describe, expect, it } from "vitest";
import { newEventId, randomHex } from "../../src/state/random-id.js";

describe("random ids from the kernel", () => {
  it("an event id is ev_ and a version 4 UUID's 32 hex digits, new each time", () => {
    const ids = Array.from({ length: 1000 }, () => newEventId());
    for (const id of ids) {
      expect(id).toMatch(/^ev_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("random hex has two digits a byte, new each time", () => {
    const hex = Array.from({ length: 200 }, () => randomHex(6));
    for (const h of hex) expect(h).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(hex).size).toBe(hex.length);
  });
});
