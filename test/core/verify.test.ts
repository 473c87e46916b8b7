import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FINDING_CODES } from "../../src/core/checks/findings.js";
import { type VerifyInput, verifyMemory } from "../../src/core/checks/verify.js";
import type { EngramBody } from "../../src/schema/engram.js";
import {
  body,
  buildTree,
  canonicalKey,
  codes,
  inputOf,
  replaceFile,
  type Tree,
  validTree,
} from "./verify-fixtures.js";

describe("verifyMemory: a valid tree", () => {
  it("has no findings", () => {
    const tree = validTree();
    expect(tree.catalog.entries).toHaveLength(4);
    expect(verifyMemory(inputOf(tree))).toEqual([]);
  });

  it("accepts .gitkeep files and an empty memory without MEMORY.md", () => {
    const tree = validTree();
    const gitkeeps = [
      { path: "memory/st/.gitkeep", text: "" },
      { path: "memory/lt/.gitkeep", text: "" },
    ];
    expect(verifyMemory(inputOf(tree, { files: [...tree.files, ...gitkeeps] }))).toEqual([]);
    const empty = buildTree([]);
    expect(verifyMemory(inputOf(empty, { files: gitkeeps, memoryMd: undefined }))).toEqual([]);
    expect(verifyMemory(inputOf(empty))).toEqual([]);
  });

  it("has no findings for generated valid trees (no false positives)", () => {
    const iso = fc
      .date({
        min: new Date("2000-01-01T00:00:00Z"),
        max: new Date("2099-12-31T23:59:59Z"),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const bodyArb = fc
      .record({
        created: iso,
        start: iso,
        scope: fc.constantFrom("st" as const, "lt" as const),
        topics: fc.array(text, { maxLength: 4 }),
        facts: fc.array(text, { maxLength: 4 }),
        extra: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
          maxKeys: 3,
        }),
        surprise: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
      })
      .map(({ created, start, scope, topics, facts, extra, surprise }) => {
        const version = created
          .replace(/[-:]/g, "")
          .replace("T", "-")
          .replace(/\.\d{3}Z$/, "Z");
        const [lo, hi] = start < created ? [start, created] : [created, start];
        const base = body(0);
        return {
          ...base,
          version,
          scope,
          created_at: created,
          source_window: { start_ts: lo, end_ts: hi },
          topics,
          facts,
          provenance: { ...extra, ...base.provenance },
          signals: { ...base.signals, max_surprise: surprise },
        } as EngramBody;
      });
    fc.assert(
      fc.property(
        fc.uniqueArray(bodyArb, { maxLength: 5, selector: (b) => canonicalKey(b) }),
        (bodies) => {
          const tree = buildTree(bodies);
          expect(verifyMemory(inputOf(tree))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("verifyMemory: invariant 1, any edit to any file is detected", () => {
  const special = fc.constantFrom(
    " ",
    "\n",
    "\r",
    "\t",
    '"',
    "\\",
    "0",
    "1",
    "9",
    "e",
    "E",
    "-",
    "+",
    ".",
    ",",
    ":",
  );
  const structural = fc.constantFrom("{", "}", "[", "]", "a", "f", "é", "\u2028", "\ud800");
  const char = fc.oneof(
    special,
    structural,
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  );
  type Edit = { target: number; pos: number; op: "replace" | "insert" | "delete"; ch: string };
  const edit: fc.Arbitrary<Edit> = fc.record({
    target: fc.nat(),
    pos: fc.nat(),
    op: fc.constantFrom("replace" as const, "insert" as const, "delete" as const),
    ch: char,
  });

  function applyEdit(text: string, e: Edit): string {
    const pos = e.pos % (text.length + (e.op === "insert" ? 1 : 0));
    if (e.op === "insert") return text.slice(0, pos) + e.ch + text.slice(pos);
    if (e.op === "delete") return text.slice(0, pos) + text.slice(pos + 1);
    return text.slice(0, pos) + e.ch + text.slice(pos + 1);
  }

  function editedInput(tree: Tree, e: Edit): VerifyInput | undefined {
    const target = e.target % (tree.files.length + 1);
    if (target === tree.files.length) {
      const catalogText = applyEdit(tree.catalogText, e);
      return catalogText === tree.catalogText ? undefined : inputOf(tree, { catalogText });
    }
    const file = tree.files[target]!;
    const text = applyEdit(file.text, e);
    return text === file.text
      ? undefined
      : inputOf(tree, { files: replaceFile(tree.files, file.path, text) });
  }

  it("a single-character edit of an engram file or the catalog yields a finding", () => {
    const tree = validTree();
    fc.assert(
      fc.property(edit, (e) => {
        const input = editedInput(tree, e);
        fc.pre(input !== undefined);
        expect(verifyMemory(input!).length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it("every single-character edit of the catalog or an engram is detected (exhaustive over positions)", () => {
    const tree = validTree();
    const file = tree.files[0]!;
    const variants = (text: string): string[] => {
      const out: string[] = [];
      for (let pos = 0; pos < text.length; pos++) {
        out.push(text.slice(0, pos) + text.slice(pos + 1));
        for (const ch of [" ", "0", '"']) out.push(text.slice(0, pos) + ch + text.slice(pos + 1));
      }
      return out.filter((edited) => edited !== text);
    };
    for (const catalogText of variants(tree.catalogText)) {
      expect(verifyMemory(inputOf(tree, { catalogText })).length).toBeGreaterThan(0);
    }
    for (const text of variants(file.text)) {
      const files = replaceFile(tree.files, file.path, text);
      expect(verifyMemory(inputOf(tree, { files })).length).toBeGreaterThan(0);
    }
  });

  it("a value with a non-canonical number form still hashes the same but is detected", () => {
    const big = body(5, {
      provenance: { ...body(5).provenance, ratio: 1e21 } as EngramBody["provenance"],
    });
    const tree = buildTree([big]);
    expect(verifyMemory(inputOf(tree))).toEqual([]);
    const file = tree.files[0]!;
    const text = file.text.replace("1e+21", "1E+21");
    expect(text).not.toBe(file.text);
    expect(codes(verifyMemory(inputOf(tree, { files: [{ path: file.path, text }] })))).toEqual([
      "engram-not-canonical-form",
    ]);
  });
});

describe("verifyMemory: determinism", () => {
  it("the order of the listed files does not matter", () => {
    const tree = validTree();
    const files = [
      ...tree.files,
      { path: "memory/st/a.txt", text: "" },
      { path: "memory/lt/b.txt", text: "" },
    ];
    const damaged = replaceFile(files, tree.files[2]!.path, "{");
    const expected = verifyMemory(inputOf(tree, { files: damaged }));
    fc.assert(
      fc.property(fc.shuffledSubarray(damaged, { minLength: damaged.length }), (shuffled) => {
        expect(verifyMemory(inputOf(tree, { files: shuffled }))).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });

  it("declares every code it can report", () => {
    expect(new Set(FINDING_CODES).size).toBe(FINDING_CODES.length);
  });
});
