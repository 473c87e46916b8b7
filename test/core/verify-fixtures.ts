/** Memory trees for the verifyMemory tests: valid ones, and the means to damage them. */
import type { Finding, FindingCode } from "../../src/core/checks/findings.js";
import type { MemoryFile, VerifyInput } from "../../src/core/checks/verify.js";
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

export const CATALOG = "memory/catalog.json";
export const MEMORY = defaultConfig().memory;

export function body(n: number, over: Partial<EngramBody> = {}): EngramBody {
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

export interface Tree {
  engrams: Engram[];
  files: MemoryFile[];
  catalog: Catalog;
  catalogText: string;
  memoryMd: string;
  memory: MemoryConfig;
}

export function focusText(
  catalog: Catalog,
  items = ["Token refresh goes through src/auth/refresh.ts"],
): string {
  const lines = items.map((item) => `- ${item}`);
  return `${FOCUS_TITLE}\n\n${focusMarker(catalog.catalog_version, catalog.hash)}\n\n${lines.join("\n")}\n`;
}

export function buildTree(bodies: readonly EngramBody[], memory: MemoryConfig = MEMORY): Tree {
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

export function validTree(): Tree {
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

export function inputOf(tree: Tree, over: Partial<VerifyInput> = {}): VerifyInput {
  return {
    catalogText: tree.catalogText,
    files: tree.files,
    memoryMd: tree.memoryMd,
    memory: tree.memory,
    ...over,
  };
}

/** Replaces the catalog by `raw` with a fresh hash, and MEMORY.md to match, so only `raw` is wrong. */
export function withRawCatalog(tree: Tree, raw: Record<string, unknown>): VerifyInput {
  const sealed = { ...raw, hash: catalogHashOf(raw) } as Catalog;
  return inputOf(tree, { catalogText: serializeCatalog(sealed), memoryMd: focusText(sealed) });
}

export function withEntries(tree: Tree, entries: readonly unknown[]): VerifyInput {
  return withRawCatalog(tree, { ...tree.catalog, entries });
}

export function replaceFile(
  files: readonly MemoryFile[],
  path: string,
  text: string,
): MemoryFile[] {
  return files.map((f) => (f.path === path ? { path, text } : f));
}

export function codes(findings: readonly Finding[]): FindingCode[] {
  return [...new Set(findings.map((f) => f.code))].sort();
}

export function first(
  tree: Tree,
  i = 0,
): { engram: Engram; file: MemoryFile; entry: CatalogEntry } {
  const file = tree.files[i]!;
  const engram = tree.engrams[i]!;
  const entry = tree.catalog.entries.find((e) => e.path === file.path)!;
  return { engram, file, entry };
}

export function canonicalKey(b: EngramBody): string {
  return engramHashOf(b as Record<string, unknown>);
}
