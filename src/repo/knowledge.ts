import {
  type KnowledgeItem,
  knowledgeFiles,
  knowledgeItems,
  versionTimes,
} from "../core/versions/knowledge-view.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import type { Catalog } from "../schema/engram.js";
import { readConfinedText } from "./confine.js";

/** When each logged version was made (`memory/versions.ndjson`), by number. */
export async function readVersionTimes(repoDir: string): Promise<Map<number, string>> {
  return versionTimes(await readConfinedText(repoDir, VERSION_LOG_PATH));
}

/** The clear knowledge records of the work tree's knowledge files (`knowledgeItems`). */
export async function readKnowledge(repoDir: string, catalog: Catalog): Promise<KnowledgeItem[]> {
  const listed = knowledgeFiles(catalog);
  if (listed.length === 0) return [];
  const texts = new Map<string, string>();
  for (const entry of listed) {
    const text = await readConfinedText(repoDir, entry.path, "document");
    if (text !== undefined) texts.set(entry.path, text);
  }
  return knowledgeItems(catalog, texts, await readVersionTimes(repoDir));
}
