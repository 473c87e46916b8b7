import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, contentHash, sha256Hex } from "../../src/core/model/canonical.js";
import { batchIdFromIso, isoFromBatchId } from "../../src/core/model/time.js";

describe("canonicalJson (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"], "\u00e9": 2, A: { d: 1, c: 2 } })).toBe(
      '{"A":{"c":2,"d":1},"a":[true,null,"x"],"b":1,"é":2}',
    );
  });

  it("uses ECMAScript number forms (RFC 8785 section 3.2.2.3 examples)", () => {
    expect(canonicalJson([0, -0, 1e21, 1e-7, Number("333333333.33333329"), 4.5, 2e-3, 1e23])).toBe(
      "[0,0,1e+21,1e-7,333333333.3333333,4.5,0.002,1e+23]",
    );
  });

  it("escapes strings as JSON does, and refuses non-finite numbers", () => {
    expect(canonicalJson('\u2028\n"\\')).toBe('"\u2028\\n\\"\\\\"');
    expect(() => canonicalJson(Number.NaN)).toThrow(/non-finite/);
  });

  it("is independent of key insertion order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(record));
        expect(JSON.parse(canonicalJson(record))).toEqual(JSON.parse(JSON.stringify(record)));
      }),
    );
  });

  it("content hashes leave out the named fields", () => {
    const body = { x: 1, hash: "whatever", engram_id: "e_1" };
    expect(contentHash(body, ["hash", "engram_id"])).toBe(`sha256:${sha256Hex('{"x":1}')}`);
  });
});

describe("batch ids", () => {
  it("are UTC stamps from receipt times, in any time zone", () => {
    expect(batchIdFromIso("2026-11-22T23:59:58.999+05:45")).toBe("20261122-181458Z");
    expect(isoFromBatchId("20261122-181458Z")).toBe("2026-11-22T18:14:58.000Z");
  });
});

describe("canonicalJson against the plain recursive form", () => {
  /** RFC 8785 as written: every value on its own, keys sorted by UTF-16 code units. */
  function reference(value: unknown): string {
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (Array.isArray(value)) {
      return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(",")}}`;
  }

  it("writes what it writes for any JSON value, lists of strings and mixed lists alike", () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(
        fc.string({ unit: "binary" }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
      ),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { maxLength: 5 }),
        fc.array(fc.string({ unit: "binary" }), { maxLength: 5 }),
        fc.dictionary(fc.string({ unit: "binary" }), tie("node"), { maxKeys: 5 }),
      ),
    }));
    fc.assert(
      fc.property(value.node, (v) => canonicalJson(v) === reference(v)),
      { numRuns: 2000 },
    );
  });
});
