import type { Catalog } from "../../schema/engram.js";
import { serializeCatalog } from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, isGitkeepPath } from "../model/paths.js";
import { VERSION_LOG_PATH } from "../versions/log.js";
import { countsOf, logWith, recordFor } from "../versions/record.js";
import { episodeCount, knowledgeRecords } from "../versions/tally.js";
import { rebaseCatalog } from "./catalog-merge.js";
import { mergeDocuments } from "./documents-merge.js";

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
  const documents = mergeDocuments(base, proposal, onto);
  const rebased = rebaseCatalog({
    base,
    proposal: proposal.catalog,
    onto: onto.catalog,
    rejected,
    documents: documents.entries,
  });
  if (!rebased.changed) return { files: onto, carried: 0 };
  const files = new Map<string, string>();
  const keep = new Set(rebased.catalog.entries.map((e) => e.path));
  for (const [path, text] of onto.files) {
    const kept =
      path === CATALOG_PATH ||
      path === FOCUS_PATH ||
      path === VERSION_LOG_PATH ||
      isGitkeepPath(path);
    if (kept || keep.has(path)) files.set(path, text);
  }
  for (const [path, text] of documents.files) files.set(path, text);
  for (const entry of rebased.carried) {
    const text = proposal.files.get(entry.path);
    if (text === undefined) throw new MissingProposalFile(entry.path);
    files.set(entry.path, text);
  }
  files.set(CATALOG_PATH, serializeCatalog(rebased.catalog));
  const log = replayedLog(rebased.catalog, proposal, onto, files);
  if (log !== undefined) files.set(VERSION_LOG_PATH, log);
  return { files: { catalog: rebased.catalog, files }, carried: rebased.carried.length };
}

/**
 * The version log of a replayed proposal: the proposal's own when its catalog stands as it
 * was; otherwise `onto`'s log with one line for the rebuilt version (the versions the proposal
 * had made never reached main). No log on `onto` and none proposed: none.
 */
function replayedLog(
  catalog: Catalog,
  proposal: MemoryFiles,
  onto: MemoryFiles,
  files: ReadonlyMap<string, string>,
): string | undefined {
  const proposed = proposal.files.get(VERSION_LOG_PATH);
  if (catalog === proposal.catalog && proposed !== undefined) return proposed;
  const base = onto.files.get(VERSION_LOG_PATH);
  if (base === undefined && proposed === undefined) return undefined;
  // Episodes and facts are what the merged sessions' documents hold.
  const counts = {
    ...countsOf(catalog, files.keys(), undefined),
    episodes: episodeCount(files),
    facts: knowledgeRecords(files).length,
  };
  return logWith(base, recordFor(catalog, { kind: "cycle" }, counts));
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
