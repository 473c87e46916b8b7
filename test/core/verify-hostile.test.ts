import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatFinding } from "../../src/core/checks/findings.js";
import { verifyMemory } from "../../src/core/checks/verify.js";
import { serializeCatalog } from "../../src/core/model/engram.js";
import { codes, first, inputOf, replaceFile, validTree } from "./verify-fixtures.js";

describe("verifyMemory: hostile input never throws", () => {
  it("arbitrary text as catalog, engram file or MEMORY.md", () => {
    const tree = validTree();
    const junk = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.jsonValue().map((v) => JSON.stringify({ ...JSON.parse(tree.catalogText), entries: [v] })),
    );
    fc.assert(
      fc.property(junk, junk, junk, (catalogText, fileText, memoryMd) => {
        const path = tree.files[0]!.path;
        const findings = verifyMemory(
          inputOf(tree, { catalogText, memoryMd, files: replaceFile(tree.files, path, fileText) }),
        );
        expect(findings.length).toBeGreaterThan(0);
        for (const f of findings) expect(formatFinding(f)).not.toMatch(/[\n\r]/);
      }),
      { numRuns: 300 },
    );
  });

  it("odd JSON shapes", () => {
    const tree = validTree();
    for (const catalogText of [
      "null",
      "[]",
      '"catalog"',
      "42",
      '{"entries": 5}',
      '{"entries": [null, 1, {}]}',
    ]) {
      const findings = verifyMemory(inputOf(tree, { catalogText }));
      expect(findings.some((f) => f.code === "catalog-invalid")).toBe(true);
    }
    const path = tree.files[0]!.path;
    for (const text of ["null", "[]", "{}", '{"__proto__": {"polluted": true}}']) {
      const findings = verifyMemory(inputOf(tree, { files: replaceFile(tree.files, path, text) }));
      expect(findings.some((f) => f.path === path && f.code === "engram-invalid")).toBe(true);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("deeply nested JSON", () => {
    const tree = validTree();
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    const catalogFindings = verifyMemory(inputOf(tree, { catalogText: deep }));
    expect(codes(catalogFindings)).toContain("catalog-invalid");

    // Deep nesting in a loose field passes the schema but cannot be hashed.
    const { file } = first(tree);
    const text = file.text.replace(
      '"created_by": "director"',
      `"created_by": "director", "x": ${deep}`,
    );
    const findings = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, text) }),
    );
    expect(findings).toContainEqual(
      expect.objectContaining({
        path: file.path,
        code: "engram-hash",
        message: expect.stringMatching(/^content hash cannot be computed/),
      }),
    );
  });

  it("non-finite numbers (1e999)", () => {
    const tree = validTree();
    const { file } = first(tree);
    const text = file.text.replace(
      '"created_by": "director"',
      '"created_by": "director", "x": 1e999',
    );
    const findings = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, text) }),
    );
    expect(codes(findings)).toEqual(
      expect.arrayContaining(["engram-hash", "engram-not-canonical-form", "entry-mismatch"]),
    );
  });

  it("huge catalogs: every entry broken, issues capped", () => {
    const tree = validTree();
    const entries = Array.from({ length: 50_000 }, (_, i) => ({
      path: `memory/st/x/${i}`,
      bytes: -1,
    }));
    const catalogText = JSON.stringify({ ...tree.catalog, entries });
    const findings = verifyMemory(inputOf(tree, { catalogText }));
    const invalid = findings.filter((f) => f.code === "catalog-invalid");
    expect(invalid.length).toBe(21);
    expect(invalid.some((f) => /more schema issues not shown$/.test(f.message))).toBe(true);
    expect(findings.length).toBeLessThan(100);
  });

  it("huge files and long strings produce short messages", () => {
    const tree = validTree();
    const { file } = first(tree);
    const huge = file.text.replace("pool=forks", "x".repeat(2_000_000));
    const findings = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, huge) }),
    );
    expect(codes(findings)).toEqual([
      "engram-hash",
      "engram-id",
      "engram-too-large",
      "entry-mismatch",
    ]);
    for (const f of findings) expect(formatFinding(f).length).toBeLessThan(500);
    const longHash = { ...tree.catalog, hash: "y".repeat(100_000) };
    const more = verifyMemory(inputOf(tree, { catalogText: serializeCatalog(longHash) }));
    for (const f of more) expect(formatFinding(f).length).toBeLessThan(500);
  });
});
