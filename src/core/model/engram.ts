import type {
  Catalog,
  CatalogEntry,
  DocumentEntry,
  Engram,
  EngramBody,
} from "../../schema/engram.js";
import { canonicalJson, contentHash } from "./canonical.js";

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
  "promotion",
  "entities",
  "evidence",
  "origins",
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

/** Builds a catalog with entries sorted by path and its hash computed (invariant 1). */
export function sealCatalog(
  catalogVersion: number,
  createdAt: string,
  entries: readonly CatalogEntry[],
  documents?: readonly DocumentEntry[],
): Catalog {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // Documents are listed only when there are some: a catalog without them hashes as before.
  const docs =
    documents !== undefined && documents.length > 0
      ? {
          documents: [...documents]
            .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
            .map((d) => ({ path: d.path, kind: d.kind, hash: d.hash, bytes: d.bytes })),
        }
      : {};
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

/** Catalog bytes: fixed key order (additive fields kept, after the known ones), trailing newline. */
export function serializeCatalog(catalog: Catalog): string {
  const fixed = orderKeys(
    { ...catalog, entries: catalog.entries.map((e) => orderKeys(e, ENTRY_KEY_ORDER)) },
    CATALOG_KEY_ORDER,
  );
  return `${JSON.stringify(fixed, null, 2)}\n`;
}

export function catalogHashOf(catalog: Record<string, unknown>): string {
  return contentHash(catalog, CATALOG_HASH_EXCLUDES);
}

export const EMPTY_CATALOG_TIME = "1970-01-01T00:00:00.000Z";

export function emptyCatalog(): Catalog {
  return sealCatalog(0, EMPTY_CATALOG_TIME, []);
}

export { canonicalJson };
