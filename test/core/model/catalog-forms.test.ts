import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  entryForms,
  sealCatalog,
  sealCatalogWith,
  serializeCatalog,
  serializeCatalogWith,
} from "../../../src/core/model/engram.js";
import type { CatalogEntry, DocumentEntry } from "../../../src/schema/engram.js";

// Strings that would trip a careless splice: layout look-alikes, escapes, astral characters.
const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom('\n  "entries": []', '"entries": []', "}\n", "line\nbreak", "\u2028", "é😀"),
);

const entryArb: fc.Arbitrary<CatalogEntry> = fc
  .record({
    engram_id: textArb,
    scope: fc.constantFrom("st" as const, "lt" as const),
    version: textArb,
    path: textArb,
    hash: textArb,
    // Odd topics (holes, other types) take the general canonical form: the same bytes.
    topics: fc.oneof(
      { weight: 4, arbitrary: fc.array(textArb, { maxLength: 3 }) },
      fc.sparseArray(fc.oneof(textArb, fc.integer()), { maxLength: 3 }) as fc.Arbitrary<string[]>,
    ),
    bytes: fc.nat(),
    // Additive fields a newer writer may have put in an entry, in any order.
    extra: fc.oneof(
      fc.constant({}),
      fc.dictionary(textArb, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    ),
  })
  .map(({ extra, ...entry }) => ({ ...extra, ...entry }) as CatalogEntry);

const documentArb: fc.Arbitrary<DocumentEntry> = fc.record({
  path: textArb,
  kind: fc.constantFrom("state" as const, "core" as const, "session" as const),
  hash: textArb,
  bytes: fc.nat(),
});

const catalogArgs = fc.record({
  version: fc.nat(),
  createdAt: textArb,
  entries: fc.array(entryArb, { maxLength: 8 }),
  documents: fc.option(fc.array(documentArb, { maxLength: 4 }), { nil: undefined }),
});

describe("entry forms", () => {
  it("seal and serialize a catalog to exactly the bytes of the straightforward path", () => {
    fc.assert(
      fc.property(catalogArgs, ({ version, createdAt, entries, documents }) => {
        const plain = sealCatalog(version, createdAt, entries, documents);
        const forms = entryForms(entries);
        const reused = sealCatalogWith(forms, version, createdAt, documents);
        expect(reused).toEqual(plain);
        expect(reused.entries).toBe(forms.entries);
        expect(serializeCatalogWith(reused, forms)).toBe(serializeCatalog(plain));
      }),
      { numRuns: 300 },
    );
  });

  it("serve every version of a run: only the version, time and documents change", () => {
    const entries: CatalogEntry[] = [
      {
        engram_id: "e_b",
        scope: "st",
        version: "v2",
        path: "memory/st/b.json",
        hash: "h2",
        topics: [],
        bytes: 2,
      },
      {
        engram_id: "e_a",
        scope: "lt",
        version: "v1",
        path: "memory/lt/a.json",
        hash: "h1",
        topics: ["x"],
        bytes: 1,
      },
    ];
    const forms = entryForms(entries);
    let catalog = sealCatalogWith(forms, 1, "2026-01-01T00:00:00.000Z");
    for (let v = 2; v < 5; v++) {
      const documents: DocumentEntry[] = [
        { path: `memory/sessions/s${v}.json`, kind: "session", hash: `d${v}`, bytes: v },
      ];
      catalog = sealCatalogWith(forms, v, catalog.created_at, documents);
      const plain = sealCatalog(v, catalog.created_at, entries, documents);
      expect(catalog.hash).toBe(plain.hash);
      expect(serializeCatalogWith(catalog, forms)).toBe(serializeCatalog(plain));
    }
  });

  it("serialize a catalog of other entries the straightforward way", () => {
    const forms = entryForms([]);
    const other = sealCatalog(3, "2026-01-01T00:00:00.000Z", [
      { engram_id: "e_a", scope: "lt", version: "v1", path: "p", hash: "h", topics: [], bytes: 1 },
    ]);
    expect(serializeCatalogWith(other, forms)).toBe(serializeCatalog(other));
  });
});
