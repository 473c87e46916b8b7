import { MEMORY_DIR } from "../core/model/paths.js";
import {
  ancestry,
  type GitRepo,
  inTree,
  readBlobText,
  readTreeAt,
  subtreeAt,
} from "../git/history.js";

/** Where a file was found in history, and its bytes. */
export interface HistoryHit {
  commit: string;
  path: string;
  text: string;
}

/**
 * Searches the history of `start`, newest first, for `memory/{st,lt}/<batch>/<fileName>`
 * whose text `accept`s; stops at the first. Only `memory/` subtrees are read, and a subtree
 * already searched (same object id in another commit) is never read again, so most commits
 * cost one small tree read.
 */
export async function findMemoryFileInHistory(
  repo: GitRepo,
  start: string,
  fileName: string,
  accept: (text: string, path: string) => boolean,
): Promise<HistoryHit | undefined> {
  const searched = new Set<string>();
  const memoryPath = inTree(repo, MEMORY_DIR);
  for await (const { oid, commit } of ancestry(repo, [start])) {
    const memory = await subtreeAt(repo, commit.tree, memoryPath);
    if (!memory || searched.has(memory.oid)) continue;
    for (const scope of memory.entries) {
      if ((scope.path !== "st" && scope.path !== "lt") || scope.type !== "tree") continue;
      if (searched.has(scope.oid)) continue;
      for (const batch of (await readTreeAt(repo, scope.oid)).entries) {
        if (batch.type !== "tree" || searched.has(batch.oid)) continue;
        const file = (await readTreeAt(repo, batch.oid)).entries.find(
          (e) => e.path === fileName && e.type === "blob",
        );
        searched.add(batch.oid);
        if (!file) continue;
        const text = await readBlobText(repo, file.oid);
        const path = `${MEMORY_DIR}/${scope.path}/${batch.path}/${fileName}`;
        if (accept(text, path)) return { commit: oid, path, text };
      }
      searched.add(scope.oid);
    }
    searched.add(memory.oid);
  }
  return undefined;
}
