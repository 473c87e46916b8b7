import { existsSync } from "node:fs";
import {
  type CatalogSummary,
  parseCatalogSummary,
  serializeCatalogSummary,
  summarizeCatalog,
} from "../core/compaction/catalog-summary.js";
import { sha256Hex } from "../core/model/canonical.js";
import { emptyCatalog } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import { withPath } from "../errors.js";
import { readBytes } from "../fs-async.js";
import type { Catalog } from "../schema/engram.js";
import { readCacheFile, writeCacheFile } from "../state/cache-file.js";
import { PathConfiner } from "./confine.js";
import { parseCatalog } from "./memory-tree.js";

/** The catalog as a cycle first sees it: its summary now, the whole catalog when asked. */
export interface CatalogRead {
  summary: CatalogSummary;
  /** The summary came from the cache: a cycle wrote or checked these very bytes before. */
  cached: boolean;
  /** The validated catalog, parsed from the bytes the summary was taken from (once). */
  catalog(): Promise<Catalog>;
  /** Caches the summary for the next run when it was not cached (an idle cycle calls it). */
  remember(): void;
}

/**
 * Reads `memory/catalog.json` once and answers its summary from the cache at `cachePath`
 * when the cache was written for these very bytes; otherwise parses and checks the catalog
 * (a damaged one throws, as `readCatalog` does). Writes nothing itself: `director status`
 * stays read-only, and a cycle that goes on to write the catalog caches the new one instead.
 */
export async function readCatalogSummary(repoDir: string, cachePath: string): Promise<CatalogRead> {
  const path = new PathConfiner(repoDir).resolve(CATALOG_PATH, "memory", CATALOG_PATH);
  if (!existsSync(path)) {
    const empty = emptyCatalog();
    return {
      summary: summarizeCatalog(empty),
      cached: true,
      catalog: async () => empty,
      remember: () => {},
    };
  }
  const bytes = await readBytes(path).catch((e) => Promise.reject(withPath(e, CATALOG_PATH)));
  let parsed: Promise<Catalog> | undefined;
  const catalog = () => {
    parsed ??= parseCatalog(bytes.toString("utf8"));
    return parsed;
  };
  const fileSha256 = sha256Hex(bytes);
  const cached = parseCatalogSummary(await readCacheFile(cachePath), fileSha256);
  if (cached !== undefined) return { summary: cached, cached: true, catalog, remember: () => {} };
  const summary = summarizeCatalog(await catalog());
  const remember = () => writeCacheFile(cachePath, serializeCatalogSummary(fileSha256, summary));
  return { summary, cached: false, catalog, remember };
}

/**
 * Caches the summary of a catalog a cycle has just written (`text`, its file's content), so
 * the next idle run finds it without parsing the catalog once more.
 */
export function writeCatalogSummary(
  cachePath: string,
  text: string,
  summary: CatalogSummary,
): void {
  writeCacheFile(cachePath, serializeCatalogSummary(sha256Hex(text), summary));
}
