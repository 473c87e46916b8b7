import type { KnowledgeItem } from "../core/proposal/knowledge.js";
import {
  proposedRecords,
  recordItem,
  releasedRecordIds,
} from "../core/proposal/withhold-records.js";
import { knowledgeFiles } from "../core/versions/knowledge-view.js";
import { type GitRepo, readFileAt } from "../git/history.js";
import { catalogAt, knowledgeRecordIdsAt } from "../repo/memory-at.js";
import type { Catalog } from "../schema/engram.js";

/** The records a head adds, and by knowledge file the ids a reviewer released. */
export interface AddedRecords {
  items: KnowledgeItem[];
  released: Map<string, Set<string>>;
}

/**
 * The sessions' knowledge records (`memory/knowledge/<kind>.json`) the head adds to the base,
 * as review items whose `engram_id` is their knowledge file: what the pull-request body lists
 * and flags beside the engrams' items (src/director/pull-request.ts), read from git objects.
 * A catalog that does not parse is verify's to report: then there is nothing to flag here.
 */
export async function addedRecords(
  repo: GitRepo,
  base: string,
  head: string,
): Promise<AddedRecords> {
  const headCatalog = await catalogOrUndefined(repo, head);
  if (headCatalog === undefined) return { items: [], released: new Map() };
  const baseCatalog = await catalogOrUndefined(repo, base);
  const baseRecords =
    baseCatalog === undefined
      ? new Set<string>()
      : await knowledgeRecordIdsAt(repo, base, baseCatalog);
  const files = new Map<string, string>();
  for (const entry of knowledgeFiles(headCatalog)) {
    const file = await readFileAt(repo, head, entry.path);
    if (file !== undefined) files.set(entry.path, file.text);
  }
  const released = new Map<string, Set<string>>();
  for (const [path, text] of files) released.set(path, releasedRecordIds(text));
  return {
    items: proposedRecords(headCatalog, files, baseRecords).map(recordItem),
    released,
  };
}

async function catalogOrUndefined(repo: GitRepo, commit: string): Promise<Catalog | undefined> {
  try {
    return await catalogAt(repo, commit);
  } catch {
    return undefined;
  }
}
