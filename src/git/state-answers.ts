/**
 * The two questions every command asks git about the state folder (tracked? ignored?),
 * answered from the repository's files where the answer is certain, so that a `worker emit`
 * starts no `git`. Each answer is only ever "yes, safe": where anything is unusual (a linked
 * worktree, an index of version 4 or split, a `.gitignore` with a negation, the folder's name
 * in the index at all) the answer is "ask git", and git decides as before.
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Indexes larger than this are searched by git itself (it reads them without a copy). */
const MAX_INDEX_BYTES = 32 * 1024 * 1024;

/** A state folder name these answers handle: one plain folder at the top of the work tree. */
const PLAIN_TOP_FOLDER = /^[A-Za-z0-9._-]+$/;

/** The repository's own git folder (`.git`, a real folder), or undefined. */
function gitFolderOf(repoDir: string): string | undefined {
  const dotGit = join(repoDir, ".git");
  if (lstatSync(dotGit, { throwIfNoEntry: false })?.isDirectory() !== true) return undefined;
  // A folder named .git without HEAD is not a repository to git.
  return lstatSync(join(dotGit, "HEAD"), { throwIfNoEntry: false })?.isFile() === true
    ? dotGit
    : undefined;
}

/**
 * True when git surely tracks no file in `dir/` (what `git ls-files -- dir/` would list):
 * the index (version 2 or 3, not split, where every path is written whole) holds the bytes
 * `dir/` nowhere, or there is no index yet. False means: ask git.
 */
export function surelyUntracked(repoDir: string, dir: string): boolean {
  if (!PLAIN_TOP_FOLDER.test(dir) || dir === "." || dir === "..") return false;
  // Case-insensitive pathspecs could match `.ENGRAM/...`.
  if (process.env.GIT_ICASE_PATHSPECS !== undefined) return false;
  const gitDir = gitFolderOf(repoDir);
  if (gitDir === undefined) return false;
  const index = join(gitDir, "index");
  const st = lstatSync(index, { throwIfNoEntry: false });
  if (st === undefined) return true;
  if (!st.isFile() || st.size > MAX_INDEX_BYTES) return false;
  // A split index keeps most entries in a shared file: git reads both.
  if (readdirSync(gitDir).some((name) => name.startsWith("sharedindex."))) return false;
  const bytes = readFileSync(index);
  if (bytes.length < 12 || bytes.toString("latin1", 0, 4) !== "DIRC") return false;
  const version = bytes.readUInt32BE(4);
  if (version !== 2 && version !== 3) return false;
  return bytes.indexOf(`${dir}/`, 12, "latin1") === -1;
}

/**
 * True when git surely ignores `dir/` (what `git check-ignore -q -- dir/` answers): the work
 * tree's top `.gitignore` (a real file) has a line naming the folder (`/dir/`, `dir/`, `/dir`
 * or `dir`, as `director init` writes it) and no negation (`!`) anywhere. That file outranks
 * `.git/info/exclude` and `core.excludesFile`, so nothing else can take the folder back.
 * False means: ask git.
 */
export function surelyIgnored(repoDir: string, dir: string): boolean {
  if (!PLAIN_TOP_FOLDER.test(dir) || dir === "." || dir === "..") return false;
  if (gitFolderOf(repoDir) === undefined) return false;
  const file = join(repoDir, ".gitignore");
  // git reads no .gitignore through a symbolic link.
  if (lstatSync(file, { throwIfNoEntry: false })?.isFile() !== true) return false;
  // git skips a byte order mark, so a first line `!...` after one is a negation too.
  const lines = readFileSync(file, "utf8")
    .replace(/^\uFEFF/, "")
    .split("\n");
  if (lines.some((line) => line.startsWith("!"))) return false;
  const naming = new Set([`/${dir}/`, `${dir}/`, `/${dir}`, dir]);
  return lines.some((line) => naming.has(line));
}
