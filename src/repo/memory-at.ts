import { emptyCatalog } from "../core/model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import { knowledgeFiles } from "../core/versions/knowledge-view.js";
import { knowledgeRecords } from "../core/versions/tally.js";
import { StateError } from "../errors.js";
import { type GitRepo, readFileAt, readFilesUnder } from "../git/history.js";
import { checkedCatalog } from "../schema/catalog-check.js";
import { Catalog } from "../schema/engram.js";

/** Memory at a commit, read from git objects (never the work tree): the catalog and its files. */
export async function memoryFilesAt(repo: GitRepo, commit: string): Promise<MemoryFiles> {
  const files = new Map<string, string>();
  for (const file of await readFilesUnder(repo, commit, MEMORY_DIR))
    files.set(file.path, file.text);
  const focus = await readFileAt(repo, commit, FOCUS_PATH);
  if (focus) files.set(FOCUS_PATH, focus.text);
  return { catalog: parseCatalogAt(files.get(CATALOG_PATH), commit), files };
}

/** Only the catalog of a commit: where the engrams themselves are not needed. */
export async function catalogAt(repo: GitRepo, commit: string): Promise<Catalog> {
  return parseCatalogAt((await readFileAt(repo, commit, CATALOG_PATH))?.text, commit);
}

/** The ids of the knowledge records sessions consolidated into memory at a commit. */
export async function knowledgeRecordIdsAt(
  repo: GitRepo,
  commit: string,
  catalog: Catalog,
): Promise<Set<string>> {
  const files = new Map<string, string>();
  for (const entry of knowledgeFiles(catalog)) {
    const file = await readFileAt(repo, commit, entry.path);
    if (file !== undefined) files.set(entry.path, file.text);
  }
  return new Set(knowledgeRecords(files).map((r) => String(r.id)));
}

function parseCatalogAt(text: string | undefined, commit: string): Catalog {
  if (text === undefined) return emptyCatalog();
  const json: unknown = JSON.parse(text);
  const checked = checkedCatalog(json);
  if (checked !== undefined) return checked;
  const parsed = Catalog.safeParse(json);
  if (!parsed.success) {
    throw new StateError(`${CATALOG_PATH} at ${commit.slice(0, 12)}: not a valid catalog`);
  }
  return parsed.data as Catalog;
}
