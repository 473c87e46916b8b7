import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { TIER_GITKEEPS } from "../core/model/engram.js";
import { CATALOG_PATH, FOCUS_PATH } from "../core/model/paths.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import { CORE_DIR, STATE_DIR } from "../core/versions/documents.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { forEachLimited } from "../state/atomic.js";
import { PathConfiner } from "./confine.js";
import { readCatalog } from "./memory-tree.js";

/** The state and core documents of a memory tree (`memory/{state,core}/*.json`), sorted. */
export function documentPaths(dir: string): string[] {
  const out: string[] = [];
  const confiner = new PathConfiner(dir);
  for (const folder of [STATE_DIR, CORE_DIR]) {
    confiner.refuseLinks(folder, folder);
    const full = join(dir, folder);
    if (!existsSync(full)) continue;
    for (const entry of readdirSync(full, { withFileTypes: true })) {
      // Only finished documents: a writer's temp file never ends in .json.
      if (entry.isFile() && entry.name.endsWith(".json")) out.push(`${folder}/${entry.name}`);
    }
  }
  return out.sort();
}

/**
 * A memory tree's files as the Director wrote them: the catalog, the engrams it lists,
 * MEMORY.md, the tiers' `.gitkeep` files, the version log and the state and core documents.
 * Only these are read, so a temp file left by a killed writer is never taken along.
 */
export async function readMemoryFiles(dir: string): Promise<MemoryFiles> {
  const catalog = await readCatalog(dir);
  // Engrams and the session documents, both listed by the catalog.
  const listed = [...catalog.entries, ...(catalog.documents ?? [])].map((e) => e.path);
  const optional = [CATALOG_PATH, FOCUS_PATH, ...TIER_GITKEEPS, VERSION_LOG_PATH];
  // Every path confined (the catalog's were checked as it was read), no link followed.
  const confiner = new PathConfiner(dir);
  const full = (path: string) => confiner.resolve(path, "memory", `${dir}: ${path}`);
  const paths = [...optional.filter((p) => existsSync(full(p))), ...listed];
  const known = new Set(paths);
  paths.push(...documentPaths(dir).filter((p) => !known.has(p)));
  const texts: string[] = new Array(paths.length);
  // The catalog's engrams must be there: a missing one is an error, not a smaller tree.
  await forEachLimited(
    paths.map((path, i) => ({ path, i })),
    32,
    async ({ path, i }) => {
      texts[i] = await readFile(full(path), "utf8");
    },
  );
  const files = new Map<string, string>();
  for (let i = 0; i < paths.length; i++) files.set(paths[i] as string, texts[i] as string);
  return { catalog, files };
}
