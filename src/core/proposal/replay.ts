import type { Catalog } from "../../schema/engram.js";
import { serializeCatalog } from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, isGitkeepPath } from "../model/paths.js";
import { rebaseCatalog } from "./catalog-merge.js";

/** A memory tree as files: repository-relative path to text. */
export interface MemoryFiles {
  catalog: Catalog;
  files: Map<string, string>;
}

/** A proposal's engram listed by its catalog but absent from its files. */
export class MissingProposalFile extends Error {
  constructor(readonly path: string) {
    super(`${path}: listed by the proposal's catalog but missing from it`);
  }
}

/**
 * `proposal`'s changes since `base`, replayed on `onto`: catalog and files. Engrams the
 * proposal added (and not `rejected`) are carried with their bytes; `onto`'s own changes
 * stay. MEMORY.md is kept as `onto` has it: the cycle that follows renders it anew.
 */
export function replay(
  base: Catalog,
  proposal: MemoryFiles,
  onto: MemoryFiles,
  rejected: ReadonlySet<string>,
): { files: MemoryFiles; carried: number } {
  const rebased = rebaseCatalog({ base, proposal: proposal.catalog, onto: onto.catalog, rejected });
  if (!rebased.changed) return { files: onto, carried: 0 };
  const files = new Map<string, string>();
  const keep = new Set(rebased.catalog.entries.map((e) => e.path));
  for (const [path, text] of onto.files) {
    const kept = path === CATALOG_PATH || path === FOCUS_PATH || isGitkeepPath(path);
    if (kept || keep.has(path)) files.set(path, text);
  }
  for (const entry of rebased.carried) {
    const text = proposal.files.get(entry.path);
    if (text === undefined) throw new MissingProposalFile(entry.path);
    files.set(entry.path, text);
  }
  files.set(CATALOG_PATH, serializeCatalog(rebased.catalog));
  return { files: { catalog: rebased.catalog, files }, carried: rebased.carried.length };
}

/** One file of a memory tree that differs between two trees: its new text, or null when gone. */
export interface FileChange {
  path: string;
  content: string | null;
}

/** What turns `from` into `to`, sorted by path. */
export function memoryChanges(
  from: ReadonlyMap<string, string>,
  to: ReadonlyMap<string, string>,
): FileChange[] {
  const changes: FileChange[] = [];
  for (const [path, text] of to) {
    if (from.get(path) !== text) changes.push({ path, content: text });
  }
  for (const path of from.keys()) {
    if (!to.has(path)) changes.push({ path, content: null });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
