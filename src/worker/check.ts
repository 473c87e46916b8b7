import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { catalogHashOf, engramHashOf } from "../core/engram.js";
import type { RepoContext } from "../director/context.js";
import { CATALOG_PATH, listTierFiles, readCatalog, readTextIfExists } from "../repo/memory-tree.js";
import { forEachLimited } from "../state/atomic.js";

export interface CheckResult {
  ok: boolean;
  catalog_version: number;
  catalog_hash: string;
  /** The catalog's own hash does not match its content. */
  catalog_modified: boolean;
  missing: string[];
  modified: string[];
  unlisted: string[];
}

/** Whether the local memory files match their catalog: nothing missing, edited or extra. */
export async function checkMemory(ctx: RepoContext): Promise<CheckResult> {
  const catalogText = await readTextIfExists(join(ctx.repoDir, CATALOG_PATH));
  const catalog = await readCatalog(ctx.repoDir);
  const catalogModified =
    catalogText !== undefined &&
    catalogHashOf(JSON.parse(catalogText) as Record<string, unknown>) !== catalog.hash;
  const missing: string[] = [];
  const modified: string[] = [];
  await forEachLimited(catalog.entries, 32, async (entry) => {
    let text: string;
    try {
      text = await readFile(join(ctx.repoDir, entry.path), "utf8");
    } catch {
      missing.push(entry.path);
      return;
    }
    try {
      if (engramHashOf(JSON.parse(text) as Record<string, unknown>) !== entry.hash)
        modified.push(entry.path);
    } catch {
      modified.push(entry.path);
    }
  });
  const listed = new Set(catalog.entries.map((e) => e.path));
  const unlisted = (await listTierFiles(ctx.repoDir)).filter(
    (p) => !listed.has(p) && !p.endsWith("/.gitkeep"),
  );
  missing.sort();
  modified.sort();
  return {
    ok: !catalogModified && missing.length === 0 && modified.length === 0 && unlisted.length === 0,
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    catalog_modified: catalogModified,
    missing,
    modified,
    unlisted,
  };
}
