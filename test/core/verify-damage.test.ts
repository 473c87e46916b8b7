import { describe, expect, it } from "vitest";
import { formatFinding } from "../../src/core/checks/findings.js";
import { verifyMemory } from "../../src/core/checks/verify.js";
import {
  catalogHashOf,
  engramHashOf,
  sealEngram,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { FOCUS_TITLE } from "../../src/core/rendering/focus-header.js";
import type { Engram } from "../../src/schema/engram.js";
import {
  body,
  buildTree,
  CATALOG,
  codes,
  first,
  focusText,
  inputOf,
  MEMORY,
  replaceFile,
  validTree,
  withEntries,
} from "./verify-fixtures.js";

describe("verifyMemory: one finding per kind of damage", () => {
  it("catalog-missing", () => {
    const findings = verifyMemory(inputOf(validTree(), { catalogText: undefined }));
    expect(findings).toEqual([{ path: CATALOG, code: "catalog-missing", message: "is missing" }]);
  });

  it("catalog-invalid: not JSON", () => {
    const findings = verifyMemory(inputOf(validTree(), { catalogText: '{"catalog_version": 7,' }));
    expect(codes(findings)).toEqual(["catalog-invalid"]);
    expect(findings[0]!.message).toMatch(/^is not valid JSON: /);
  });

  it("catalog-invalid: schema issues name their paths; valid entries are still checked", () => {
    const tree = validTree();
    const entries = tree.catalog.entries.map((e, i) => (i === 1 ? { ...e, hash: "sha1:abc" } : e));
    const findings = verifyMemory(withEntries(tree, entries));
    expect(codes(findings)).toEqual(["catalog-invalid"]);
    expect(findings.map(formatFinding)).toEqual([
      `${CATALOG}: entries[1].hash: expected sha256:<64 hex digits>`,
    ]);
    // Salvaged entries are still compared with their files.
    const files = replaceFile(tree.files, tree.catalog.entries[0]!.path, "{}");
    const more = verifyMemory({ ...withEntries(tree, entries), files });
    expect(
      more.some((f) => f.path === tree.catalog.entries[0]!.path && f.code === "engram-invalid"),
    ).toBe(true);
  });

  it("catalog-not-canonical-form: whitespace and CRLF edits", () => {
    const tree = validTree();
    for (const catalogText of [
      tree.catalogText.replace('"catalog_version": 7', '"catalog_version":  7'),
      tree.catalogText.replace(/\n/g, "\r\n"),
      tree.catalogText.trimEnd(),
      JSON.stringify(tree.catalog),
    ]) {
      const findings = verifyMemory(inputOf(tree, { catalogText }));
      expect(codes(findings)).toEqual(["catalog-not-canonical-form"]);
    }
    const findings = verifyMemory(
      inputOf(tree, {
        catalogText: tree.catalogText.replace('"catalog_version": 7', '"catalog_version":  7'),
      }),
    );
    expect(findings[0]!.message).toContain("first difference at line 2 column 22");
  });

  it("catalog-hash: content edited, hash kept", () => {
    const tree = validTree();
    const catalogText = tree.catalogText.replace(
      "2026-11-23T08:00:05.000Z",
      "2026-11-23T08:00:06.000Z",
    );
    const findings = verifyMemory(inputOf(tree, { catalogText }));
    const recomputed = catalogHashOf(JSON.parse(catalogText));
    expect(findings).toEqual([
      {
        path: CATALOG,
        code: "catalog-hash",
        message: `hash ${tree.catalog.hash} does not match its content (recomputed ${recomputed})`,
      },
    ]);
  });

  it("catalog-unsorted", () => {
    const tree = validTree();
    const findings = verifyMemory(withEntries(tree, [...tree.catalog.entries].reverse()));
    expect(codes(findings)).toEqual(["catalog-unsorted"]);
    expect(findings[0]!.message).toMatch(
      /^entries are not sorted by path \(3 out of order\): entries\[1\] /,
    );
  });

  it("duplicate-id", () => {
    const tree = validTree();
    const { entry: e } = first(tree);
    const index = tree.catalog.entries.indexOf(e);
    // The same engram listed again under lt: consistent path, but no such file.
    const twin = { ...e, scope: "lt" as const, path: e.path.replace("memory/st/", "memory/lt/") };
    const entries = [...tree.catalog.entries, twin].sort((a, b) => (a.path < b.path ? -1 : 1));
    const findings = verifyMemory(withEntries(tree, entries));
    expect(codes(findings)).toEqual(["duplicate-id", "missing-file"]);
    expect(findings).toContainEqual({
      path: CATALOG,
      code: "duplicate-id",
      message: `engram_id ${e.engram_id} is listed 2 times (entries[${entries.indexOf(twin)}], entries[${index + 1}])`,
    });
  });

  it("duplicate-path", () => {
    const tree = validTree();
    const e = tree.catalog.entries[2]!;
    const entries = [...tree.catalog.entries];
    entries.splice(3, 0, e);
    const findings = verifyMemory(withEntries(tree, entries));
    expect(codes(findings)).toEqual(["duplicate-id", "duplicate-path"]);
    expect(findings).toContainEqual({
      path: CATALOG,
      code: "duplicate-path",
      message: `path ${e.path} is listed 2 times (entries[2], entries[3])`,
    });
  });

  it("entry-path", () => {
    const tree = validTree();
    const e = tree.catalog.entries[0]!;
    const moved = e.path.replace("20261", "20251");
    const entries = tree.catalog.entries.map((x, i) => (i === 0 ? { ...x, path: moved } : x));
    const findings = verifyMemory(withEntries(tree, entries));
    expect(codes(findings)).toEqual(["entry-path", "unlisted-file"]);
    expect(findings).toContainEqual({
      path: CATALOG,
      code: "entry-path",
      message: `entries[0].path ${moved} should be ${e.path} (from its scope, version and engram_id)`,
    });
  });

  it("missing-file", () => {
    const tree = validTree();
    const gone = tree.files[1]!.path;
    const findings = verifyMemory(
      inputOf(tree, { files: tree.files.filter((f) => f.path !== gone) }),
    );
    const index = tree.catalog.entries.findIndex((e) => e.path === gone);
    expect(findings).toEqual([
      {
        path: gone,
        code: "missing-file",
        message: `is listed in memory/catalog.json (entries[${index}]) but does not exist`,
      },
    ]);
  });

  it("unlisted-file", () => {
    const tree = validTree();
    const stray = sealEngram(body(99));
    const file = {
      path: `memory/st/${stray.version}/engram_${stray.engram_id}.json`,
      text: serializeEngram(stray),
    };
    const findings = verifyMemory(inputOf(tree, { files: [...tree.files, file] }));
    expect(findings).toEqual([
      { path: file.path, code: "unlisted-file", message: "is not listed in memory/catalog.json" },
    ]);
  });

  it("bad-layout: stray files and a non-empty .gitkeep", () => {
    const tree = validTree();
    const { engram, file } = first(tree);
    const extra = [
      { path: "memory/st/notes.txt", text: "hello" },
      { path: `memory/st/2026-11-22/engram_${engram.engram_id}.json`, text: file.text },
      { path: "memory/lt/.gitkeep", text: "payload" },
    ];
    const findings = verifyMemory(inputOf(tree, { files: [...tree.files, ...extra] }));
    expect(codes(findings)).toEqual(["bad-layout"]);
    expect(findings.map((f) => f.path)).toEqual(extra.map((f) => f.path).sort());
  });

  it("engram-invalid: not JSON, and schema issues with paths", () => {
    const tree = validTree();
    const { file, engram } = first(tree);
    const broken = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, "{ nope") }),
    );
    expect(broken).toContainEqual(
      expect.objectContaining({ path: file.path, code: "engram-invalid" }),
    );

    // A schema violation sealed properly, so only the schema complains.
    const bad = { ...engram, topics: ["auth", 7] } as unknown as Record<string, unknown>;
    const hash = engramHashOf(bad);
    const resealed = { ...bad, hash, engram_id: `e_${hash.slice(7, 39)}` };
    const text = serializeEngram(resealed as Engram);
    const path = `memory/st/${engram.version}/engram_${resealed.engram_id}.json`;
    const findings = verifyMemory(inputOf(tree, { files: [...tree.files, { path, text }] }));
    expect(findings.map(formatFinding)).toEqual([
      `${path}: topics[1]: Invalid input: expected string, received number`,
      `${path}: is not listed in memory/catalog.json`,
    ]);
  });

  it("engram-not-canonical-form: whitespace-only edits", () => {
    const tree = validTree();
    const { file, entry } = first(tree);
    const compact = `${JSON.stringify(JSON.parse(file.text))}\n`;
    const entries = tree.catalog.entries.map((e) =>
      e.path === entry.path ? { ...e, bytes: Buffer.byteLength(compact) } : e,
    );
    const findings = verifyMemory({
      ...withEntries(tree, entries),
      files: replaceFile(tree.files, file.path, compact),
    });
    expect(findings).toEqual([
      {
        path: file.path,
        code: "engram-not-canonical-form",
        message:
          "is not in canonical form (2-space pretty JSON, one trailing newline): first difference at line 1 column 2",
      },
    ]);
    // Same length: swap an indentation space for a tab.
    const tabbed = file.text.replace('\n  "hash"', '\n \t"hash"');
    const same = verifyMemory(inputOf(tree, { files: replaceFile(tree.files, file.path, tabbed) }));
    expect(codes(same)).toEqual(["engram-not-canonical-form"]);
  });

  it("engram-hash and engram-id: content edited, identity kept", () => {
    const tree = validTree();
    const { file, engram } = first(tree);
    const text = file.text.replace("pool=forks", "pool=forkz");
    const findings = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, text) }),
    );
    const recomputed = engramHashOf(JSON.parse(text));
    expect(findings).toEqual([
      {
        path: file.path,
        code: "engram-hash",
        message: `hash ${engram.hash} does not match its content (recomputed ${recomputed})`,
      },
      {
        path: file.path,
        code: "engram-id",
        message: `engram_id ${engram.engram_id} does not derive from its content (expected e_${recomputed.slice(7, 39)})`,
      },
    ]);
  });

  it("engram-id: id forged, hash intact", () => {
    const tree = validTree();
    const { file, engram } = first(tree);
    const forged = `e_${"0".repeat(32)}`;
    const text = file.text.replace(engram.engram_id, forged);
    const findings = verifyMemory(
      inputOf(tree, { files: replaceFile(tree.files, file.path, text) }),
    );
    expect(findings).toContainEqual({
      path: file.path,
      code: "engram-id",
      message: `engram_id ${forged} does not derive from its content (expected ${engram.engram_id})`,
    });
    expect(codes(findings)).toEqual(["engram-id", "engram-path", "entry-mismatch"]);
  });

  it("engram-path: a file moved to another tier", () => {
    const tree = validTree();
    const { file } = first(tree);
    const moved = file.path.replace("memory/st/", "memory/lt/");
    const files = tree.files.map((f) => (f.path === file.path ? { path: moved, text: f.text } : f));
    const findings = verifyMemory(inputOf(tree, { files }));
    expect(codes(findings)).toEqual(["engram-path", "missing-file", "unlisted-file"]);
    expect(findings).toContainEqual({
      path: moved,
      code: "engram-path",
      message: "scope st does not match its folder memory/lt",
    });
  });

  it("engram-window", () => {
    const tree = buildTree([
      body(1, {
        source_window: { start_ts: "2026-11-22T10:00:00.000Z", end_ts: "2026-11-22T09:00:00.000Z" },
      }),
    ]);
    const findings = verifyMemory(inputOf(tree));
    expect(findings).toEqual([
      {
        path: tree.files[0]!.path,
        code: "engram-window",
        message:
          "source_window.start_ts 2026-11-22T10:00:00.000Z is after source_window.end_ts 2026-11-22T09:00:00.000Z",
      },
    ]);
  });

  it("entry-mismatch: topics, bytes and hash", () => {
    const tree = validTree();
    const { entry } = first(tree);
    const i = tree.catalog.entries.indexOf(entry);
    const bad = {
      ...entry,
      topics: ["billing"],
      bytes: entry.bytes + 1,
      hash: `sha256:${"a".repeat(64)}`,
    };
    const entries = tree.catalog.entries.map((e, k) => (k === i ? bad : e));
    const findings = verifyMemory(withEntries(tree, entries));
    expect(findings.map(formatFinding)).toEqual([
      `${entry.path}: catalog entry bytes ${entry.bytes + 1} differs from the file's ${entry.bytes} UTF-8 bytes`,
      `${entry.path}: catalog entry hash ${bad.hash} differs from the engram's ${entry.hash}`,
      `${entry.path}: catalog entry topics ["billing"] differ from the engram's ${JSON.stringify(entry.topics)}`,
    ]);
  });

  it("engram-too-large", () => {
    const tree = validTree();
    const { entry } = first(tree);
    const findings = verifyMemory(
      inputOf(tree, { memory: { ...MEMORY, engram_max_bytes: entry.bytes - 1 } }),
    );
    expect(findings).toContainEqual({
      path: entry.path,
      code: "engram-too-large",
      message: `is ${entry.bytes} bytes, over engram_max_bytes ${entry.bytes - 1}`,
    });
    expect(codes(findings)).toEqual(["engram-too-large"]);
  });

  it("tier-bytes and tier-files", () => {
    const tree = validTree();
    const st = tree.catalog.entries.filter((e) => e.scope === "st");
    const stBytes = st.reduce((sum, e) => sum + e.bytes, 0);
    const findings = verifyMemory(
      inputOf(tree, {
        memory: { ...MEMORY, st_max_total_bytes: stBytes - 1, lt_max_files: 1, st_max_files: 2 },
      }),
    );
    expect(findings).toEqual([
      {
        path: "memory/st",
        code: "tier-bytes",
        message: `lists ${stBytes} bytes, over st_max_total_bytes ${stBytes - 1}`,
      },
      { path: "memory/st", code: "tier-files", message: "lists 3 files, over st_max_files 2" },
    ]);
    const lt = verifyMemory(
      inputOf(tree, { memory: { ...MEMORY, lt_max_files: 1, lt_max_total_bytes: 10 } }),
    );
    expect(codes(lt)).toEqual(["tier-bytes"]);
    expect(lt[0]!.path).toBe("memory/lt");
  });

  it("focus-missing", () => {
    const findings = verifyMemory(inputOf(validTree(), { memoryMd: undefined }));
    expect(findings).toEqual([
      {
        path: "MEMORY.md",
        code: "focus-missing",
        message: "is missing while memory/catalog.json lists 4 engrams",
      },
    ]);
  });

  it("focus-marker", () => {
    const tree = validTree();
    const findings = verifyMemory(
      inputOf(tree, { memoryMd: `${FOCUS_TITLE}\n\n- hand-written\n` }),
    );
    expect(codes(findings)).toEqual(["focus-marker"]);
  });

  it("focus-stale: version or hash of another catalog", () => {
    const tree = validTree();
    const older = { ...tree.catalog, catalog_version: 6 };
    const findings = verifyMemory(inputOf(tree, { memoryMd: focusText(older) }));
    expect(findings).toEqual([
      {
        path: "MEMORY.md",
        code: "focus-stale",
        message: `was generated from catalog version 6 hash ${tree.catalog.hash}, but memory/catalog.json is version 7 hash ${tree.catalog.hash}`,
      },
    ]);
    const otherHash = { ...tree.catalog, hash: `sha256:${"0".repeat(64)}` };
    expect(codes(verifyMemory(inputOf(tree, { memoryMd: focusText(otherHash) })))).toEqual([
      "focus-stale",
    ]);
  });

  it("focus-bytes and focus-items", () => {
    const tree = validTree();
    const bytes = Buffer.byteLength(tree.memoryMd);
    const findings = verifyMemory(
      inputOf(tree, {
        memory: { ...MEMORY, memory_md_max_bytes: bytes - 1, memory_md_max_items: 1 },
      }),
    );
    expect(findings).toEqual([
      {
        path: "MEMORY.md",
        code: "focus-bytes",
        message: `is ${bytes} bytes, over memory_md_max_bytes ${bytes - 1}`,
      },
      {
        path: "MEMORY.md",
        code: "focus-items",
        message: "has 2 items, over memory_md_max_items 1",
      },
    ]);
  });

  it("reports every problem at once, sorted by path, code, message", () => {
    const tree = validTree();
    const files = tree.files.slice(1).concat({ path: "memory/lt/x.txt", text: "" });
    const findings = verifyMemory(
      inputOf(tree, {
        files,
        catalogText: tree.catalogText.replace('"catalog_version": 7', '"catalog_version": 8'),
        memoryMd: undefined,
      }),
    );
    expect(codes(findings)).toEqual([
      "bad-layout",
      "catalog-hash",
      "focus-missing",
      "missing-file",
    ]);
    const keys = findings.map((f) => [f.path, f.code, f.message].join("\u0000"));
    expect(keys).toEqual([...keys].sort());
  });
});

describe("verifyMemory: text that is not valid Unicode", () => {
  it("reports a lone surrogate escaped in an engram file", () => {
    const tree = validTree();
    const [first, ...rest] = tree.files;
    if (first === undefined) throw new Error("no engram file");
    // `\ud800` alone, inside a JSON string: the file's own hash may still match, but a strict
    // RFC 8785 implementation refuses to hash it.
    const broken = { ...first, text: first.text.replace("{", '{"note":"x\\ud800",') };
    const findings = verifyMemory(inputOf(tree, { files: [broken, ...rest] }));
    expect(findings).toContainEqual(
      expect.objectContaining({ path: first.path, code: "lone-surrogate" }),
    );
  });

  it("reports a lone surrogate in MEMORY.md", () => {
    const tree = validTree();
    const findings = verifyMemory(inputOf(tree, { memoryMd: `${tree.memoryMd}\uDC00` }));
    expect(findings.map((f) => f.code)).toContain("lone-surrogate");
  });
});
