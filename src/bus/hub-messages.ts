import type { Catalog } from "../schema/engram.js";

/** What the hub broadcasts after a cycle: the engrams it wrote, and the whole catalog. */

/** `engram_announce.v1`: the engrams a cycle wrote, as the new catalog lists them. */
export function announcePayload(catalog: Catalog, writtenPaths: readonly string[]) {
  const written = new Set(writtenPaths);
  return {
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    engrams: catalog.entries
      .filter((e) => written.has(e.path))
      .map(({ engram_id, scope, version, path, hash, topics }) => ({
        engram_id,
        scope,
        version,
        path,
        hash,
        topics,
      })),
  };
}

/** `engram_catalog_snapshot.v1`: every entry of the catalog, without its topics. */
export function snapshotPayload(catalog: Catalog) {
  return {
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    created_at: catalog.created_at,
    entries: catalog.entries.map(({ engram_id, scope, version, path, hash }) => ({
      engram_id,
      scope,
      version,
      path,
      hash,
    })),
  };
}

/** Paths of the catalog's entries that are new or changed since `before`. */
export function writtenSince(before: Catalog | undefined, after: Catalog): string[] {
  const known = new Set(before?.entries.map((e) => `${e.path}\0${e.hash}`));
  return after.entries.filter((e) => !known.has(`${e.path}\0${e.hash}`)).map((e) => e.path);
}
