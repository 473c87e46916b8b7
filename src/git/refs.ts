/**
 * Plain refs (a tag, a branch) read and written straight in the git directory, as git lays
 * them out: a loose file `refs/...` holding the id, else a line of `packed-refs`. A version
 * step reads and moves a tag per version; the in-process git library builds its file-system
 * wrapper anew on every call, which costs more than the read itself.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

const OID = /^[0-9a-f]{40}$/;

interface Packed {
  /** Size, modification time and inode of the file the refs were read from. */
  stamp: string;
  refs: Map<string, string>;
}
const packedByGitdir = new Map<string, Packed>();

/** `packed-refs`, parsed once per version of the file. */
function packedRefs(gitdir: string): Map<string, string> {
  const path = join(gitdir, "packed-refs");
  let stamp: string;
  try {
    const s = statSync(path);
    stamp = `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    packedByGitdir.delete(gitdir);
    return new Map();
  }
  const cached = packedByGitdir.get(gitdir);
  if (cached?.stamp === stamp) return cached.refs;
  const refs = new Map<string, string>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    // `# pack-refs with: ...` is a header; `^<oid>` peels the annotated tag above it.
    if (line === "" || line.startsWith("#") || line.startsWith("^")) continue;
    const space = line.indexOf(" ");
    const oid = line.slice(0, space);
    if (OID.test(oid)) refs.set(line.slice(space + 1), oid);
  }
  packedByGitdir.set(gitdir, { stamp, refs });
  return refs;
}

/**
 * The id a plain ref names, or undefined when there is no such ref. A symbolic ref (`ref:
 * ...`) is no plain ref: undefined too, for the caller to resolve another way.
 */
export function readPlainRef(gitdir: string, ref: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(gitdir, ref), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
    return packedRefs(gitdir).get(ref);
  }
  const oid = text.trim();
  return OID.test(oid) ? oid : undefined;
}

/**
 * Points a ref at `oid` with a loose file (temp file, then rename), which takes precedence
 * over any line of `packed-refs`, as git's own update does.
 */
export function writePlainRef(gitdir: string, ref: string, oid: string): void {
  if (!OID.test(oid)) throw new TypeError(`writePlainRef: ${oid} is not an object id`);
  const path = join(gitdir, ref);
  mkdirSync(dirname(path), { recursive: true });
  // Git's own lock name: git lists no ref ending in `.lock`, so a killed write shows nowhere.
  const temp = `${path}.lock`;
  writeFileSync(temp, `${oid}\n`);
  renameSync(temp, path);
}

/** What the git files say of HEAD: its commit, no commit yet (a new repository), or unknown. */
export type HeadRead = { commit: string } | { unborn: true } | undefined;

/**
 * HEAD read from the git files as `git rev-parse HEAD` would (a linked worktree's own HEAD,
 * its branches in the common directory): its commit, or `unborn` when HEAD names a branch
 * with no commit yet, or undefined when it cannot be read that way (a reftable repository, a
 * layout this does not know): ask git then. A recall reads it on every call; starting git for
 * it cost more than the search.
 */
export function readHead(repoDir: string): HeadRead {
  try {
    let gitDir = join(repoDir, ".git");
    if (statSync(gitDir).isFile()) {
      const named = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, "utf8"))?.[1]?.trim();
      if (!named) return undefined;
      gitDir = resolve(repoDir, named);
    }
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    if (OID.test(head)) return { commit: head };
    const ref = /^ref:\s*(refs\/\S+)$/.exec(head)?.[1];
    if (ref === undefined) return undefined;
    const common = (() => {
      try {
        return resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
      } catch {
        return gitDir;
      }
    })();
    const commit = readPlainRef(gitDir, ref) ?? readPlainRef(common, ref);
    if (commit !== undefined) return { commit };
    // Refs kept elsewhere than loose files and packed-refs: only git can say.
    if (existsSync(join(common, "reftable")) || existsSync(join(gitDir, "reftable"))) {
      return undefined;
    }
    // A ref file that exists but holds no id (a symbolic ref, a torn write): ask git.
    if (existsSync(join(gitDir, ref)) || existsSync(join(common, ref))) return undefined;
    return { unborn: true };
  } catch {
    return undefined;
  }
}

/**
 * Whether the repository at `repoDir` has no commit and no ref yet (a new repository): then
 * no branch, tag or HEAD names anything, and a command need not start git to learn it.
 * False whenever the files leave a doubt.
 */
export function hasNoRefs(repoDir: string): boolean {
  const head = readHead(repoDir);
  if (head === undefined || !("unborn" in head)) return false;
  const gitDir = join(repoDir, ".git");
  try {
    if (!statSync(gitDir).isDirectory() || existsSync(join(gitDir, "commondir"))) return false;
    if (existsSync(join(gitDir, "packed-refs"))) return false;
    return noFileUnder(join(gitDir, "refs"));
  } catch {
    return false;
  }
}

function noFileUnder(dir: string): boolean {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !noFileUnder(join(dir, entry.name))) return false;
  }
  return true;
}

/** The commit HEAD names, or undefined when the git files do not say (see `readHead`). */
export function headCommitOf(repoDir: string): string | undefined {
  const head = readHead(repoDir);
  return head !== undefined && "commit" in head ? head.commit : undefined;
}
