/**
 * Every git read of the guard, restore and `ingest --from-git`, in process through
 * isomorphic-git: objects are read at commits, never through the work tree or the index.
 */
import fs from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import git, { type CommitObject } from "isomorphic-git";
import { StateError, UsageError } from "../errors.js";
import { objectFs } from "./object-fs.js";
import type { PackBuilder } from "./pack-writer.js";

/** An opened repository: where its objects are, and where the engram repo sits inside it. */
export interface GitRepo {
  /** The work tree root (the folder holding `.git`). */
  dir: string;
  /** The git directory with the objects and shared refs (a linked worktree's common dir). */
  gitdir: string;
  /** This work tree's own HEAD file (differs from `<gitdir>/HEAD` in a linked worktree). */
  headFile: string;
  /** The engram repository folder relative to `dir`: "" or "sub/dir/". */
  prefix: string;
  /** isomorphic-git's object cache, shared by every call on this repository. */
  cache: object;
  /** Parsed trees by id: consecutive commits share most of them. */
  trees: Map<string, TreeEntry[]>;
  /** While set (see `batchedObjects`), objects written are gathered here for one pack. */
  pack?: PackBuilder;
}

type TreeEntry = { path: string; oid: string; type: string; mode: string };
const MAX_CACHED_TREES = 8192;

/** One commit as the walkers return it. */
export interface GitCommit {
  oid: string;
  commit: CommitObject;
}

const SHA = /^[0-9a-f]{40}$/;

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

function isNotFound(error: unknown): boolean {
  const code = errorCode(error);
  return code === "NotFoundError" || code === "ObjectTypeError";
}

/**
 * Finds the git repository holding `repoDir`. A linked worktree's `.git` file points at a
 * private git dir whose `commondir` holds the objects: isomorphic-git does not follow
 * `commondir`, so it is resolved here and HEAD is read from the worktree itself.
 */
export async function openRepo(repoDir: string): Promise<GitRepo> {
  const start = resolve(repoDir);
  let dir = start;
  while (!fs.existsSync(join(dir, ".git"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new StateError(`${start}: not inside a git repository`);
    dir = parent;
  }
  const dotgit = join(dir, ".git");
  let gitdir = dotgit;
  let headFile = join(dotgit, "HEAD");
  if (fs.statSync(dotgit).isFile()) {
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotgit, "utf8"))?.[1];
    if (pointer === undefined) throw new StateError(`${dotgit}: not a gitdir pointer`);
    const own = isAbsolute(pointer) ? pointer : resolve(dir, pointer);
    headFile = join(own, "HEAD");
    gitdir = own;
    const common = join(own, "commondir");
    if (fs.existsSync(common)) gitdir = resolve(own, fs.readFileSync(common, "utf8").trim());
  }
  const rel = relative(dir, start).split(sep).join("/");
  return {
    dir,
    gitdir,
    headFile,
    prefix: rel === "" ? "" : `${rel}/`,
    cache: {},
    trees: new Map(),
  };
}

/** The arguments every isomorphic-git call on this repository takes (writes atomic: object-fs.ts). */
export function base(repo: GitRepo) {
  return { fs: objectFs, dir: repo.dir, gitdir: repo.gitdir, cache: repo.cache };
}

export async function readCommit(repo: GitRepo, oid: string): Promise<GitCommit> {
  const { oid: id, commit } = await git.readCommit({ ...base(repo), oid });
  return { oid: id, commit };
}

/** HEAD of this work tree: its own HEAD file, then the shared refs. */
async function resolveHead(repo: GitRepo): Promise<string> {
  let text: string;
  try {
    text = fs.readFileSync(repo.headFile, "utf8").trim();
  } catch {
    throw new StateError(`${repo.dir}: cannot read HEAD`);
  }
  const target = /^ref:\s*(\S+)$/.exec(text)?.[1];
  if (target === undefined) return text;
  try {
    return await git.resolveRef({ fs, gitdir: repo.gitdir, ref: target });
  } catch {
    throw new StateError(`HEAD: ${target} has no commits yet in ${repo.dir}`);
  }
}

/** A name or sha to an object id, without suffixes; undefined when nothing matches. */
async function resolveName(repo: GitRepo, name: string): Promise<string | undefined> {
  if (name === "HEAD" || name === "@") return resolveHead(repo);
  if (SHA.test(name)) return name;
  try {
    return await git.resolveRef({ fs, gitdir: repo.gitdir, ref: name });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  if (/^[0-9a-f]{4,39}$/.test(name)) {
    try {
      return await git.expandOid({ ...base(repo), oid: name });
    } catch (error) {
      if (errorCode(error) === "AmbiguousError") {
        throw new UsageError(`${name}: ambiguous short commit id; give more digits`);
      }
      if (!isNotFound(error)) throw error;
    }
  }
  return undefined;
}

/** Annotated tags point at commits through tag objects: follow them. */
async function peelToCommit(repo: GitRepo, oid: string, ref: string): Promise<string> {
  let current = oid;
  for (let i = 0; i < 16; i++) {
    let object: Awaited<ReturnType<typeof git.readObject>>;
    try {
      object = await git.readObject({ ...base(repo), oid: current, format: "parsed" });
    } catch (error) {
      if (isNotFound(error)) throw missingObject(ref, current);
      throw error;
    }
    if (object.type === "commit") return current;
    if (object.type !== "tag") throw new StateError(`${ref}: names a ${object.type}, not a commit`);
    current = (object.object as { object: string }).object;
  }
  throw new StateError(`${ref}: too many nested tags`);
}

function missingObject(ref: string, oid: string): StateError {
  return new StateError(
    `${ref}: commit ${oid} is not in the repository (a shallow clone? fetch the full history, e.g. fetch-depth: 0)`,
  );
}

/**
 * Resolves a revision to a commit id: `HEAD`, a branch, tag or remote-tracking name, a full
 * ref, a full or short sha, each optionally followed by `~N`, `^` or `^N`.
 */
export async function resolveCommit(repo: GitRepo, rev: string): Promise<string> {
  const m = /^(.*?)((?:[~^]\d*)*)$/.exec(rev.trim());
  const name = m?.[1] ?? "";
  if (name === "") throw new UsageError(`'${rev}': expected a branch, tag or commit`);
  const oid = await resolveName(repo, name);
  if (oid === undefined) throw new StateError(`${rev}: no branch, tag or commit of that name`);
  let current = await peelToCommit(repo, oid, rev);
  for (const step of (m?.[2] ?? "").match(/[~^]\d*/g) ?? []) {
    const n = step.length > 1 ? Number(step.slice(1)) : 1;
    if (step[0] === "~") {
      for (let i = 0; i < n; i++) current = await parentOf(repo, current, 1, rev);
    } else if (n > 0) {
      current = await parentOf(repo, current, n, rev);
    }
  }
  return current;
}

async function parentOf(repo: GitRepo, oid: string, n: number, rev: string): Promise<string> {
  const parent = (await readCommitOrFail(repo, oid, rev)).commit.parent[n - 1];
  if (parent === undefined) throw new StateError(`${rev}: commit ${oid} has no parent ${n}`);
  return parent;
}

async function readCommitOrFail(repo: GitRepo, oid: string, ref: string): Promise<GitCommit> {
  try {
    return await readCommit(repo, oid);
  } catch (error) {
    if (isNotFound(error)) throw missingObject(ref, oid);
    throw error;
  }
}

/** The local branches (`refs/heads/*`), sorted by name. */
export async function localBranches(repo: GitRepo): Promise<string[]> {
  return (await git.listBranches({ fs, gitdir: repo.gitdir })).sort();
}

/**
 * The branch a revision names, if it names one: `refs/heads/x`, `x` for a local branch, or a
 * remote-tracking `refs/remotes/<remote>/x`. A sha or a tag names no branch.
 */
export async function branchNameOf(repo: GitRepo, rev: string): Promise<string | undefined> {
  if (/[~^]/.test(rev) || rev === "HEAD") {
    if (rev !== "HEAD") return undefined;
    const text = fs.readFileSync(repo.headFile, "utf8").trim();
    return /^ref:\s*refs\/heads\/(\S+)$/.exec(text)?.[1];
  }
  let full: string;
  try {
    full = await git.expandRef({ fs, gitdir: repo.gitdir, ref: rev });
  } catch {
    return undefined;
  }
  const local = /^refs\/heads\/(.+)$/.exec(full)?.[1];
  if (local !== undefined) return local;
  return /^refs\/remotes\/[^/]+\/(.+)$/.exec(full)?.[1];
}

/** The best common ancestor of two commits, or undefined for unrelated histories. */
export async function mergeBase(repo: GitRepo, a: string, b: string): Promise<string | undefined> {
  try {
    const bases = (await git.findMergeBase({ ...base(repo), oids: [a, b] })) as string[];
    return [...bases].sort()[0];
  } catch (error) {
    if (isNotFound(error)) throw missingObject(`merge base of ${a} and ${b}`, a);
    throw error;
  }
}

/** A path relative to the engram repository, as a path in the git tree. */
export function inTree(repo: GitRepo, path: string): string {
  return `${repo.prefix}${path}`;
}

/** A file's blob id and UTF-8 text at a commit; undefined when absent (or not a file). */
export async function readFileAt(
  repo: GitRepo,
  commit: string,
  path: string,
): Promise<{ oid: string; text: string } | undefined> {
  try {
    const { oid, blob } = await git.readBlob({
      ...base(repo),
      oid: commit,
      filepath: inTree(repo, path),
    });
    return { oid, text: Buffer.from(blob).toString("utf8") };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** A tree by id (a commit id reads its root tree), through the repository's tree cache. */
export async function readTreeAt(
  repo: GitRepo,
  oid: string,
): Promise<{ oid: string; entries: TreeEntry[] }> {
  const cached = repo.trees.get(oid);
  if (cached) return { oid, entries: cached };
  const { oid: treeOid, tree } = await git.readTree({ ...base(repo), oid });
  rememberTree(repo, treeOid, tree);
  return { oid: treeOid, entries: tree };
}

/** Puts a tree in the repository's cache (trees are immutable: an id names one content). */
export function rememberTree(repo: GitRepo, oid: string, entries: TreeEntry[]): void {
  if (repo.trees.size >= MAX_CACHED_TREES) {
    repo.trees.delete(repo.trees.keys().next().value as string);
  }
  repo.trees.set(oid, entries);
}

/** The tree at `filepath` under a commit or tree, one cached level at a time. */
export async function subtreeAt(
  repo: GitRepo,
  oid: string,
  filepath: string,
): Promise<{ oid: string; entries: TreeEntry[] } | undefined> {
  let tree = await readTreeAt(repo, oid);
  for (const name of filepath.split("/").filter((n) => n !== "")) {
    const entry = tree.entries.find((e) => e.path === name);
    if (entry?.type !== "tree") return undefined;
    tree = await readTreeAt(repo, entry.oid);
  }
  return tree;
}

/** Every file under a folder at a commit, with its text, sorted by path (repo-relative). */
export async function readFilesUnder(
  repo: GitRepo,
  commit: string,
  folder: string,
): Promise<{ path: string; text: string }[]> {
  const top = await subtreeAt(repo, commit, inTree(repo, folder));
  if (!top) return [];
  const out: { path: string; text: string }[] = [];
  const visit = async (tree: NonNullable<typeof top>, at: string): Promise<void> => {
    for (const entry of tree.entries) {
      const path = `${at}/${entry.path}`;
      if (entry.type === "tree") {
        await visit(await readTreeAt(repo, entry.oid), path);
      } else if (entry.type === "blob") {
        const { blob } = await git.readBlob({ ...base(repo), oid: entry.oid });
        out.push({ path, text: Buffer.from(blob).toString("utf8") });
      }
    }
  };
  await visit(top, folder);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Paths (relative to the git root) whose content or mode differs between two commits;
 * `from` undefined (or missing) means every file of `to`. Equal subtrees are skipped by object id, so the
 * cost follows the size of the change, not of the tree.
 */
export async function changedPaths(
  repo: GitRepo,
  from: string | undefined,
  to: string,
): Promise<string[]> {
  const treeOf = async (oid: string) => (await readCommitOrFail(repo, oid, oid)).commit.tree;
  const out: string[] = [];
  const diff = async (a: string | undefined, b: string | undefined, at: string) => {
    if (a === b) return;
    const left = a ? (await readTreeAt(repo, a)).entries : [];
    const right = b ? (await readTreeAt(repo, b)).entries : [];
    const byName = new Map<string, { a?: (typeof left)[number]; b?: (typeof left)[number] }>();
    for (const e of left) byName.set(e.path, { a: e });
    for (const e of right) byName.set(e.path, { ...byName.get(e.path), b: e });
    for (const [name, pair] of [...byName].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      if (pair.a && pair.b && pair.a.oid === pair.b.oid && pair.a.mode === pair.b.mode) continue;
      const path = at === "" ? name : `${at}/${name}`;
      const ta = pair.a?.type === "tree" ? pair.a.oid : undefined;
      const tb = pair.b?.type === "tree" ? pair.b.oid : undefined;
      if (ta !== undefined || tb !== undefined) await diff(ta, tb, path);
      // A file on either side (also one replaced by a folder, or the reverse) is a change.
      if ((pair.a && pair.a.type !== "tree") || (pair.b && pair.b.type !== "tree")) out.push(path);
    }
  };
  // A parent cut off by a shallow clone is treated like no parent, as git log does.
  let fromTree: string | undefined;
  if (from !== undefined) {
    try {
      fromTree = (await readCommit(repo, from)).commit.tree;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  await diff(fromTree, await treeOf(to), "");
  return out.sort();
}

/** Paths changed as `changedPaths` gives them, made relative to the engram repository. */
export function withinRepo(repo: GitRepo, paths: readonly string[]): string[] {
  if (repo.prefix === "") return [...paths];
  return paths.filter((p) => p.startsWith(repo.prefix)).map((p) => p.slice(repo.prefix.length));
}

/**
 * Commits reachable from `include` and not from `exclude`, newest first (committer time,
 * then id). Exact whatever the commit times: the excluded history is read whole first (each
 * commit once), then the included walk stops at it. Not `git.log`: that reads the whole
 * history before returning and only skips commits still waiting in its queue.
 */
export async function revList(
  repo: GitRepo,
  include: readonly string[],
  exclude: readonly string[] = [],
): Promise<GitCommit[]> {
  const excluded = new Set<string>();
  for await (const { oid } of ancestry(repo, exclude)) excluded.add(oid);
  const out: GitCommit[] = [];
  for await (const commit of ancestry(repo, include, excluded)) out.push(commit);
  return out;
}

/**
 * The commits of a range, oldest first: `A..B` (B's history without A's; an empty side is
 * HEAD) or one revision (all of its history). `A...B` is not supported.
 */
export async function commitsInRange(repo: GitRepo, range: string): Promise<GitCommit[]> {
  if (range.includes("...")) {
    throw new UsageError(`${range}: symmetric ranges (A...B) are not supported; use A..B`);
  }
  const parts = range.split("..");
  if (parts.length > 2) throw new UsageError(`${range}: expected A..B or a single revision`);
  const [from, to] = parts.map((p) => (p.trim() === "" ? "HEAD" : p.trim()));
  const include = [await resolveCommit(repo, to ?? (from as string))];
  const exclude = to === undefined ? [] : [await resolveCommit(repo, from as string)];
  return (await revList(repo, include, exclude)).reverse();
}

/**
 * Newest first, lazily: the history of `starts`, each commit once, never entering `stop`.
 * A parent missing from a shallow clone ends its line.
 */
export async function* ancestry(
  repo: GitRepo,
  starts: readonly string[],
  stop: ReadonlySet<string> = new Set(),
): AsyncGenerator<GitCommit> {
  const seen = new Set<string>(stop);
  const queue: GitCommit[] = [];
  for (const start of starts) {
    if (seen.has(start)) continue;
    seen.add(start);
    queue.push(await readCommitOrFail(repo, start, start));
  }
  while (queue.length > 0) {
    let best = 0;
    for (let i = 1; i < queue.length; i++) {
      const a = queue[i] as GitCommit;
      const b = queue[best] as GitCommit;
      const ta = a.commit.committer.timestamp;
      const tb = b.commit.committer.timestamp;
      if (ta > tb || (ta === tb && a.oid < b.oid)) best = i;
    }
    const node = queue.splice(best, 1)[0] as GitCommit;
    yield node;
    for (const p of node.commit.parent) {
      if (seen.has(p)) continue;
      seen.add(p);
      try {
        queue.push(await readCommit(repo, p));
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
}

/** A blob's bytes as UTF-8 text. */
export async function readBlobText(repo: GitRepo, oid: string): Promise<string> {
  const { blob } = await git.readBlob({ ...base(repo), oid });
  return Buffer.from(blob).toString("utf8");
}
