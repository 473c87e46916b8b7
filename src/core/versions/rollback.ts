import type { Catalog } from "../../schema/engram.js";
import { sealCatalog, serializeCatalog } from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, isGitkeepPath } from "../model/paths.js";
import { VERSION_LOG_PATH } from "./log.js";
import { documentKind } from "./record.js";

export interface RollbackPlan {
  catalog: Catalog;
  writes: { path: string; text: string }[];
  deletes: string[];
  /** The state and core documents the new version holds. */
  documents: string[];
}

/** Files a rollback sets to the target's: all of memory but what each version writes anew. */
function carried(path: string): boolean {
  return path !== CATALOG_PATH && path !== VERSION_LOG_PATH && path !== FOCUS_PATH;
}

/**
 * A new version whose memory equals `target`'s: the target's engrams and documents written
 * back byte for byte, what came after removed, under a catalog one version above `current`
 * listing exactly the target's entries. History is not rewritten: this is one more version.
 * MEMORY.md is rendered by the caller, from the returned catalog.
 */
export function planRollback(
  current: { catalog: Catalog; files: ReadonlyMap<string, string> },
  target: { catalog: Catalog; files: ReadonlyMap<string, string> },
  createdAt: string,
): RollbackPlan {
  // The target's documents (state, core, sessions' episodes, knowledge) come back with it.
  const catalog = sealCatalog(
    current.catalog.catalog_version + 1,
    createdAt,
    target.catalog.entries,
    target.catalog.documents,
  );
  const writes: { path: string; text: string }[] = [];
  for (const [path, text] of [...target.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (carried(path) && current.files.get(path) !== text) writes.push({ path, text });
  }
  writes.push({ path: CATALOG_PATH, text: serializeCatalog(catalog) });
  const deletes = [...current.files.keys()]
    .filter((path) => carried(path) && !isGitkeepPath(path) && !target.files.has(path))
    .sort();
  const documents = [...target.files.keys()].filter((p) => documentKind(p) !== undefined).sort();
  return { catalog, writes, deletes, documents };
}
