import type {
  Catalog,
  CatalogEntry,
  DocumentEntry,
  Engram,
  EngramBody,
} from "../../schema/engram.js";
import { canonicalJson, contentHash, sha256HexOfParts } from "./canonical.js";

/** Fields left out of an engram's content hash (invariant 1). */
export const ENGRAM_HASH_EXCLUDES = ["engram_id", "hash"] as const;
export const CATALOG_HASH_EXCLUDES = ["hash"] as const;

import { engramPath } from "./paths.js";

// The path builders live with the other memory paths; callers of this module still find them here.
export { ENGRAM_PATH_PATTERN, engramPath, isGitkeepPath, TIER_GITKEEPS } from "./paths.js";

/**
 * Key order of an engram file: identity, then what a reviewer reads first, then the rest.
 * The hash does not depend on it (canonical JSON sorts keys); the file bytes do.
 */
export const ENGRAM_KEY_ORDER = [
  "engram_id",
  "hash",
  "version",
  "scope",
  "created_at",
  "source_window",
  "topics",
  "facts",
  "decisions",
  "links",
  "provenance",
  "privacy",
  "signals",
  "telemetry",
  "episodes",
  "sealed",
  "tentative",
  "supersedes",
  "replaces",
  "promotion",
  "entities",
  "evidence",
  "origins",
  "said_by",
] as const;

/** Known keys first in the given order, then any others (additive fields) sorted. */
function orderKeys<T extends object>(value: T, order: readonly string[]): T {
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of order) if (record[key] !== undefined) out[key] = record[key];
  for (const key of Object.keys(record).sort()) {
    if (!(key in out) && record[key] !== undefined) out[key] = record[key];
  }
  return out as T;
}

const ordered = <T extends object>(engram: T): T => orderKeys(engram, ENGRAM_KEY_ORDER);

/** Seals an engram body: its hash and id come from its content, so they are deterministic. */
export function sealEngram(body: EngramBody): Engram {
  const hash = contentHash(body as Record<string, unknown>, ENGRAM_HASH_EXCLUDES);
  const engramId = `e_${hash.slice("sha256:".length, "sha256:".length + 32)}`;
  return ordered({ ...body, engram_id: engramId, hash } as Engram);
}

/** The bytes of an engram file: pretty JSON in `ENGRAM_KEY_ORDER` (reviewable), trailing newline. */
export function serializeEngram(engram: Engram): string {
  return `${JSON.stringify(ordered(engram), null, 2)}\n`;
}

const PLACEHOLDER_ID = `e_${"0".repeat(32)}`;
const PLACEHOLDER_HASH = `sha256:${"0".repeat(64)}`;

/**
 * The size of the file an engram body would make, without hashing it: ids and hashes have
 * a fixed length, so placeholders give the exact byte count.
 */
export function engramFileSize(body: EngramBody): number {
  return Buffer.byteLength(
    serializeEngram({ ...body, engram_id: PLACEHOLDER_ID, hash: PLACEHOLDER_HASH } as Engram),
    "utf8",
  );
}

export function engramHashOf(engram: Record<string, unknown>): string {
  return contentHash(engram, ENGRAM_HASH_EXCLUDES);
}

export function catalogEntryFor(engram: Engram, bytes: number): CatalogEntry {
  return {
    engram_id: engram.engram_id,
    scope: engram.scope,
    version: engram.version,
    path: engramPath(engram.scope, engram.version, engram.engram_id),
    hash: engram.hash,
    topics: engram.topics,
    bytes,
  };
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

// Documents are listed only when there are some: a catalog without them hashes as before.
function documentsField(documents: readonly DocumentEntry[] | undefined) {
  return documents !== undefined && documents.length > 0
    ? {
        documents: [...documents]
          .sort(byPath)
          .map((d) => ({ path: d.path, kind: d.kind, hash: d.hash, bytes: d.bytes })),
      }
    : {};
}

/** Builds a catalog with entries sorted by path and its hash computed (invariant 1). */
export function sealCatalog(
  catalogVersion: number,
  createdAt: string,
  entries: readonly CatalogEntry[],
  documents?: readonly DocumentEntry[],
): Catalog {
  const sorted = [...entries].sort(byPath);
  const docs = documentsField(documents);
  const body = { catalog_version: catalogVersion, created_at: createdAt, entries: sorted, ...docs };
  const hash = contentHash(body, CATALOG_HASH_EXCLUDES);
  return { catalog_version: catalogVersion, created_at: createdAt, hash, entries: sorted, ...docs };
}

const CATALOG_KEY_ORDER = ["catalog_version", "created_at", "hash", "entries"] as const;
const ENTRY_KEY_ORDER = [
  "engram_id",
  "scope",
  "version",
  "path",
  "hash",
  "topics",
  "bytes",
] as const;

const orderedEntry = (e: CatalogEntry) => orderKeys(e, ENTRY_KEY_ORDER);

/** Catalog bytes: fixed key order (additive fields kept, after the known ones), trailing newline. */
export function serializeCatalog(catalog: Catalog): string {
  const fixed = orderKeys(
    { ...catalog, entries: catalog.entries.map(orderedEntry) },
    CATALOG_KEY_ORDER,
  );
  return `${JSON.stringify(fixed, null, 2)}\n`;
}

/**
 * Engram entries sorted as `sealCatalog` sorts them, with the two forms every catalog over
 * them repeats: their canonical JSON (hashed) and their text in catalog.json. A run's session
 * versions all hold the same entries (sessions write no engrams): at 10,000 engrams, hashing
 * and writing them again costs some 70 ms a version.
 */
export interface EntryForms {
  readonly entries: readonly CatalogEntry[];
  readonly canonical: string;
  /** `entries` as `serializeCatalog` writes them, at the depth of the catalog's fields. */
  readonly text: string;
}

export function entryForms(entries: readonly CatalogEntry[]): EntryForms {
  const sorted = [...entries].sort(byPath);
  const text = JSON.stringify(sorted.map(orderedEntry), null, 2);
  // No JSON string holds a raw newline: every one is a line break of the layout.
  return {
    entries: sorted,
    canonical: canonicalEntries(sorted),
    text: text.replaceAll("\n", "\n  "),
  };
}

const ENTRY_FIELDS: ReadonlySet<string> = new Set(ENTRY_KEY_ORDER);

/**
 * The entry with its fields inserted in sorted order when it has exactly the known fields,
 * with values of their types: `JSON.stringify` then writes its canonical JSON. Undefined for
 * any other shape (additive fields, holes in `topics`), which `canonicalJson` handles.
 */
function canonicalShape(e: CatalogEntry) {
  const keys = Object.keys(e);
  if (keys.length !== ENTRY_FIELDS.size || !keys.every((k) => ENTRY_FIELDS.has(k)))
    return undefined;
  const { bytes, engram_id, hash, path, scope, topics, version } = e;
  const strings = [engram_id, hash, path, scope, version];
  if (!Number.isFinite(bytes) || !strings.every((v) => typeof v === "string")) return undefined;
  if (!Array.isArray(topics)) return undefined;
  for (let i = 0; i < topics.length; i++) if (typeof topics[i] !== "string") return undefined;
  return { bytes, engram_id, hash, path, scope, topics, version };
}

/** `canonicalJson(entries)`; at 10,000 entries `JSON.stringify` takes a quarter of the time. */
function canonicalEntries(entries: readonly CatalogEntry[]): string {
  const shaped: ReturnType<typeof canonicalShape>[] = [];
  for (const entry of entries) {
    const one = canonicalShape(entry);
    if (one === undefined) return canonicalJson(entries);
    shaped.push(one);
  }
  return JSON.stringify(shaped);
}

/**
 * `sealCatalog(catalogVersion, createdAt, forms.entries, documents)`, byte for byte, without
 * the canonical JSON of the entries; the catalog's `entries` are `forms.entries` itself.
 */
export function sealCatalogWith(
  forms: EntryForms,
  catalogVersion: number,
  createdAt: string,
  documents?: readonly DocumentEntry[],
): Catalog {
  const docs = documentsField(documents);
  // "entries" sorts after every other field of the body: its canonical form comes last.
  const head = canonicalJson({ catalog_version: catalogVersion, created_at: createdAt, ...docs });
  const hash = `sha256:${sha256HexOfParts([`${head.slice(0, -1)},"entries":`, forms.canonical, "}"])}`;
  const entries = forms.entries as CatalogEntry[];
  return { catalog_version: catalogVersion, created_at: createdAt, hash, entries, ...docs };
}

const EMPTY_ENTRIES = '\n  "entries": []';

/** `serializeCatalog(catalog)`, byte for byte, for a catalog whose entries are `forms.entries`. */
export function serializeCatalogWith(catalog: Catalog, forms: EntryForms): string {
  if (catalog.entries !== forms.entries) return serializeCatalog(catalog);
  const text = serializeCatalog({ ...catalog, entries: [] });
  // The only line at depth 1 that starts with the "entries" key.
  const at = text.indexOf(EMPTY_ENTRIES);
  return `${text.slice(0, at)}\n  "entries": ${forms.text}${text.slice(at + EMPTY_ENTRIES.length)}`;
}

export function catalogHashOf(catalog: Record<string, unknown>): string {
  return contentHash(catalog, CATALOG_HASH_EXCLUDES);
}

export const EMPTY_CATALOG_TIME = "1970-01-01T00:00:00.000Z";

export function emptyCatalog(): Catalog {
  return sealCatalog(0, EMPTY_CATALOG_TIME, []);
}

export { canonicalJson };
