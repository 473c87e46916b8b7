import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deltaOf } from "../../src/git/pack-delta.js";

/** Git's patch-delta, read straight from the format: what git does with a delta. */
function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let at = 0;
  const size = () => {
    let n = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = delta[at++] as number;
      n += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return n;
  };
  expect(size()).toBe(base.length);
  const out = Buffer.alloc(size());
  let written = 0;
  while (at < delta.length) {
    const command = delta[at++] as number;
    if (command & 0x80) {
      let offset = 0;
      let length = 0;
      for (let i = 0; i < 4; i++)
        if (command & (1 << i)) offset += (delta[at++] as number) * 2 ** (8 * i);
      for (let i = 0; i < 3; i++)
        if (command & (0x10 << i)) length += (delta[at++] as number) << (8 * i);
      if (length === 0) length = 0x10000;
      expect(offset + length).toBeLessThanOrEqual(base.length);
      written += base.copy(out, written, offset, offset + length);
    } else {
      expect(command).toBeGreaterThan(0);
      written += delta.copy(out, written, at, at + command);
      at += command;
    }
  }
  expect(written).toBe(out.length);
  return out;
}

/** A catalog-like file: many similar records, each with a unique id. */
function records(n: number, head: string, tail: string): Buffer {
  const lines = Array.from(
    { length: n },
    (_, i) =>
      `    {\n      "id": "e_${(i * 2654435761).toString(16)}",\n      "topics": [\n        "x"\n      ]\n    }`,
  );
  return Buffer.from(`{\n  ${head},\n  "entries": [\n${lines.join(",\n")}\n  ]${tail}\n}\n`);
}

describe("deltaOf", () => {
  it("gives a delta git applies to make the target, when it is much smaller", () => {
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 300 }),
      insert: fc.uint8Array({ maxLength: 200 }),
    });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 3000 }),
          fc.string({ maxLength: 200 }).map((s) => new TextEncoder().encode(s.repeat(20))),
        ),
        fc.array(edit, { maxLength: 5 }),
        (bytes, edits) => {
          const base = Buffer.from(bytes);
          let target = base;
          for (const { at, remove, insert } of edits) {
            const cut = target.length === 0 ? 0 : at % target.length;
            target = Buffer.concat([
              target.subarray(0, cut),
              Buffer.from(insert),
              target.subarray(cut + remove),
            ]);
          }
          const delta = deltaOf(base, target);
          if (delta !== undefined) {
            expect(delta.length).toBeLessThanOrEqual(target.length / 2);
            expect(applyDelta(base, delta).equals(target)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("copies what two versions of a catalog share: a few changed lines cost a few bytes", () => {
    const base = records(5000, '"catalog_version": 9', ',\n  "documents": [1, 2]');
    const target = records(5000, '"catalog_version": 10', ',\n  "documents": [1, 2, 3]');
    const delta = deltaOf(base, target) as Buffer;
    expect(delta.length).toBeLessThan(200);
    expect(applyDelta(base, delta).equals(target)).toBe(true);
  });

  it("copies more than a copy instruction holds, and inserts more than an insert holds", () => {
    const base = Buffer.alloc(0x1000000 + 5000, "ab");
    const target = Buffer.concat([base, Buffer.alloc(300, "z")]);
    const delta = deltaOf(base, target) as Buffer;
    expect(applyDelta(base, delta).equals(target)).toBe(true);
  });

  it("stores unlike content whole", () => {
    const base = Buffer.from("a".repeat(5000));
    expect(deltaOf(base, Buffer.from("b".repeat(5000)))).toBeUndefined();
  });
});
