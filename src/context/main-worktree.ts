import { lstatSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

/**
 * The main worktree of the linked worktree `repoDir` (made by `git worktree add`), or
 * undefined when `repoDir` is a main worktree, a submodule, a worktree of a bare repository
 * or no git work tree at all. Read from the files `git rev-parse --git-common-dir` reads
 * (`.git` is a file `gitdir: X`, and `X/commondir` names the common directory), so a
 * `worker emit` starts no git process for it.
 */
export function mainWorktreeOf(repoDir: string): string | undefined {
  const dotGit = join(repoDir, ".git");
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  // A folder: this is the main worktree. A link or anything else: not ours to follow.
  if (!st?.isFile()) return undefined;
  const gitDir = readPointer(dotGit, /^gitdir:\s*(.+)$/m);
  if (gitDir === undefined) return undefined;
  // A submodule's git dir has no commondir file: it is its own repository.
  const common = readPointer(join(gitDir, "commondir"), /^(.+)$/m);
  if (common === undefined) return undefined;
  const commonDir = resolve(gitDir, common);
  // Only a common dir named .git has a work tree around it; a bare repository has none.
  if (basename(commonDir) !== ".git") return undefined;
  const main = dirname(commonDir);
  return lstatSync(main, { throwIfNoEntry: false })?.isDirectory() ? main : undefined;
}

/** The path a pointer file names (relative to the file's folder), or undefined. */
function readPointer(file: string, pattern: RegExp): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const named = pattern.exec(text)?.[1]?.trim();
  if (named === undefined || named === "") return undefined;
  return isAbsolute(named) ? named : resolve(dirname(file), named);
}
