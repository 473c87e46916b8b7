import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FINDING_CODES,
  type Finding,
  type FindingCode,
  formatFinding,
  type MemoryFile,
  type VerifyInput,
  verifyMemory,
} from "../../src/core/checks/verify.js";
import {
  catalogEntryFor,
  catalogHashOf,
  engramHashOf,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { FOCUS_TITLE, focusMarker } from "../../src/core/rendering/focus-header.js";
import { defaultConfig, type MemoryConfig } from "../../src/schema/config.js";
import type { Catalog, CatalogEntry, Engram, EngramBody } from "../../src/schema/engram.js";

const CATALOG = "memory/catalog.json";
const MEMORY = defaultConfig().memory;

function body(n: number, over: Partial<EngramBody> = {}): EngramBody {
  return {
    version: "20261122-101500Z",
    scope: "st",
    created_at: "2026-11-22T10:15:00.000Z",
    source_window: { start_ts: "2026-11-22T09:00:00.000Z", end_ts: "2026-11-22T10:14:59.000Z" },
    topics: ["auth", `topic-${n}`],
    facts: [
      `Token refresh goes through src/auth/refresh.ts (${n})`,
      "CI runs vitest with pool=forks, café",
    ],
    decisions: [
      { title: "Hash with RFC 8785", rationale: "byte-identical files on every machine" },
    ],
    links: [
      { type: "pr", ref: "#42" },
      { type: "file", ref: "src/auth/refresh.ts" },
    ],
    provenance: {
      created_by: "director",
      run_id: "run-7",
      event_count: 12,
      senders: ["worker-a", "worker-b"],
      message_types: { "memory_note.v1": 3, "heartbeat.v1": 9 },
    },
    privacy: "private",
    signals: {
      notes: 3,
      decisions: 1,
      lessons: 0,
      incidents: 0,
      errors: 0,
      max_surprise: 0.4,
      mean_confidence: 0.8,
      redactions: 0,
      truncated: 0,
    },
    ...over,
  };
}

interface Tree {
  engrams: Engram[];
  files: MemoryFile[];
  catalog: Catalog;
  catalogText: string;
  memoryMd: string;
  memory: MemoryConfig;
}

function focusText(
  catalog: Catalog,
  items = ["Token refresh goes through src/auth/refresh.ts"],
): string {
  const lines = items.map((item) => `- ${item}`);
  return `${FOCUS_TITLE}\n\n${focusMarker(catalog.catalog_version, catalog.hash)}\n\n${lines.join("\n")}\n`;
}

function buildTree(bodies: readonly EngramBody[], memory: MemoryConfig = MEMORY): Tree {
  const engrams = bodies.map(sealEngram);
  const files = engrams.map((e) => {
    const text = serializeEngram(e);
    return { engram: e, text, entry: catalogEntryFor(e, Buffer.byteLength(text, "utf8")) };
  });
  const catalog = sealCatalog(
    7,
    "2026-11-23T08:00:05.000Z",
    files.map((f) => f.entry),
  );
  return {
    engrams,
    files: files.map((f) => ({ path: f.entry.path, text: f.text })),
    catalog,
    catalogText: serializeCatalog(catalog),
    memoryMd: focusText(catalog, [
      "Token refresh goes through src/auth/refresh.ts",
      "CI runs vitest",
    ]),
    memory,
  };
}

function validTree(): Tree {
  const st1 = sealEngram(body(1));
  return buildTree([
    body(1),
    body(2),
    body(3, { version: "20261123-080000Z", created_at: "2026-11-23T08:00:00.000Z" }),
    body(4, {
      scope: "lt",
      version: "20261120-000000Z",
      created_at: "2026-11-20T00:00:00.000Z",
      supersedes: [st1.engram_id],
      promotion: { reasons: ["repeated in 3 ST engrams"] },
    }),
  ]);
}

function inputOf(tree: Tree, over: Partial<VerifyInput> = {}): VerifyInput {
  return {
    catalogText: tree.catalogText,
    files: tree.files,
    memoryMd: tree.memoryMd,
    memory: tree.memory,
    ...over,
  };
}

/** Replaces the catalog by `raw` with a fresh hash, and MEMORY.md to match, so only `raw` is wrong. */
function withRawCatalog(tree: Tree, raw: Record<string, unknown>): VerifyInput {
  const sealed = { ...raw, hash: catalogHashOf(raw) } as Catalog;
  return inputOf(tree, { catalogText: serializeCatalog(sealed), memoryMd: focusText(sealed) });
}

function withEntries(tree: Tree, entries: readonly unknown[]): VerifyInput {
  return withRawCatalog(tree, { ...tree.catalog, entries });
}

function replaceFile(files: readonly MemoryFile[], path: string, text: string): MemoryFile[] {
  return files.map((f) => (f.path === path ? { path, text } : f));
}

function codes(findings: readonly Finding[]): FindingCode[] {
  return [...new Set(findings.map((f) => f.code))].sort();
}

function first(tree: Tree, i = 0): { engram: Engram; file: MemoryFile; entry: CatalogEntry } {
  const file = tree.files[i]!;
  const engram = tree.engrams[i]!;
  const entry = tree.catalog.entries.find((e) => e.path === file.path)!;
  return { engram, file, entry };
}

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

function canonicalKey(b: EngramBody): string {
  return engramHashOf(b as Record<string, unknown>);
}

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
