/**
 * The hand-written catalog check must agree with the zod schema: whatever it accepts, zod
 * accepts with the same value and key order; whatever zod refuses, it refuses (and the zod
 * schema then names the field). It may refuse more than zod, never less, but never a catalog
 * the Director writes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedCatalog } from "../../src/schema/catalog-check.js";
import { Catalog } from "../../src/schema/engram.js";

const hex = (n: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });
const digits = (n: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: n, maxLength: n });

const utcTime = fc
  .date({
    min: new Date("1970-01-01T00:00:00Z"),
    max: new Date("2999-12-31T23:59:59Z"),
    noInvalidDate: true,
  })
  .chain((d) =>
    fc.constantFrom(
      d.toISOString(),
      d.toISOString().replace(/\.\d{3}Z$/, "Z"),
      d.toISOString().replace(/Z$/, "123Z"),
    ),
  );

const entry = fc.record({
  engram_id: hex(32).map((h) => `e_${h}`),
  scope: fc.constantFrom("st", "lt"),
  version: fc.tuple(digits(8), digits(6)).map(([d, t]) => `${d}-${t}Z`),
  path: fc.string(),
  hash: hex(64).map((h) => `sha256:${h}`),
  topics: fc.array(fc.string(), { maxLength: 4 }),
  bytes: fc.integer({ min: 1, max: 1_000_000 }),
});

const catalog = fc.record({
  catalog_version: fc.nat(),
  created_at: utcTime,
  hash: hex(64).map((h) => `sha256:${h}`),
  entries: fc.array(entry, { maxLength: 6 }),
});

/** Values that sit on the edges of the checks. */
const odd = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    -0,
    0,
    1.5,
    -1,
    2 ** 53,
    "2024-02-29T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2024-01-01T00:00Z",
    "2024-01-01T00:00:00+00:00",
    "2024-01-01T00:00:00.Z",
    "20240101-000000Z",
    "2024010-000000Z",
    `e_${"A".repeat(32)}`,
    `sha256:${"F".repeat(64)}`,
    "st",
    "lt",
    "mt",
    [],
    ["a", 1],
    {},
    null,
  ),
);

/** Replaces, removes or adds one field somewhere in the catalog. */
function mutate(
  value: Record<string, unknown>,
  path: string[],
  replacement: unknown,
  mode: number,
) {
  const copy = structuredClone(value) as Record<string, unknown>;
  let target: Record<string, unknown> = copy;
  for (const step of path.slice(0, -1)) target = target[step] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (mode === 0) target[last] = replacement;
  else if (mode === 1) delete target[last];
  else target[`extra_${last}`] = replacement;
  return copy;
}

function agree(input: unknown): void {
  const fast = checkedCatalog(input);
  const slow = Catalog.safeParse(input);
  if (fast === undefined) return;
  expect(slow.success, JSON.stringify(input)).toBe(true);
  if (!slow.success) return;
  expect(fast).toEqual(slow.data);
  // The same key order too: what is written back from it must be byte-identical.
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.data));
}

describe("checkedCatalog", () => {
  it("accepts every valid catalog, with zod's value and key order", () => {
    fc.assert(
      fc.property(catalog, (c) => {
        expect(checkedCatalog(c)).toBeDefined();
        agree(c);
        // Unknown keys survive after the known ones, at both levels.
        agree({ extra: 1, ...c, entries: c.entries.map((e) => ({ z: [1], ...e })) });
      }),
      { numRuns: 300 },
    );
  });

  it("never accepts what zod refuses", () => {
    const keys = ["catalog_version", "created_at", "hash", "entries"];
    const entryKeys = ["engram_id", "scope", "version", "path", "hash", "topics", "bytes"];
    fc.assert(
      fc.property(
        catalog.filter((c) => c.entries.length > 0),
        fc.constantFrom(...keys, ...entryKeys),
        odd,
        fc.integer({ min: 0, max: 2 }),
        (c, key, replacement, mode) => {
          const path = keys.includes(key) ? [key] : ["entries", "0", key];
          agree(mutate(c, path, replacement, mode));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("refuses what is not a catalog at all", () => {
    for (const v of [null, [], "catalog", 3, { entries: [] }]) {
      expect(checkedCatalog(v)).toBeUndefined();
      expect(Catalog.safeParse(v).success).toBe(false);
    }
  });
});
