/**
 * Git objects written in process with isomorphic-git: the Director builds the engram
 * branch's commits straight into the object store, never through the user's work tree or
 * index. (Network operations and ref updates go through the user's own git: remote.ts.)
 */
import git from "isomorphic-git";
import { base, type GitRepo, readTreeAt, rememberTree } from "./history.js";
import { writeTextTreeFast, writeTreeFast } from "./object-ids.js";

type TreeEntry = { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" };

/** A file or folder to put at a path, or null to remove what is there. */
export type Graft = { type: "blob" | "tree"; oid: string } | null;

export async function writeTextBlob(repo: GitRepo, text: string): Promise<string> {
  return git.writeBlob({ ...base(repo), blob: Buffer.from(text, "utf8") });
}

/**
 * Writes text files as nested trees; `files` paths are relative to the tree's root. Objects
 * are hashed in process and only the ones not yet stored are written (object-ids.ts).
 */
export async function writeTextTree(
  repo: GitRepo,
  files: readonly { path: string; text: string }[],
): Promise<string> {
  return writeTextTreeFast(repo, files);
}

/**
 * A copy of the tree `treeOid` with each path in `grafts` replaced (or removed); folders on
 * the way are created as needed. Untouched subtrees keep their ids.
 */
export async function graftTree(
  repo: GitRepo,
  treeOid: string | undefined,
  grafts: ReadonlyMap<string, Graft>,
): Promise<string> {
  const entries: TreeEntry[] = treeOid
    ? ((await readTreeAt(repo, treeOid)).entries as TreeEntry[]).map((e) => ({ ...e }))
    : [];
  const here = new Map<string, Graft>();
  const deeper = new Map<string, Map<string, Graft>>();
  for (const [path, graft] of grafts) {
    const slash = path.indexOf("/");
    if (slash === -1) {
      here.set(path, graft);
      continue;
    }
    const head = path.slice(0, slash);
    const rest = deeper.get(head) ?? new Map<string, Graft>();
    rest.set(path.slice(slash + 1), graft);
    deeper.set(head, rest);
  }
  const byName = new Map(entries.map((e) => [e.path, e]));
  for (const [name, graft] of here) {
    if (graft === null) byName.delete(name);
    else {
      byName.set(name, {
        mode: graft.type === "tree" ? "040000" : "100644",
        path: name,
        oid: graft.oid,
        type: graft.type,
      });
    }
  }
  for (const [name, rest] of deeper) {
    const current = byName.get(name);
    const oid = await graftTree(repo, current?.type === "tree" ? current.oid : undefined, rest);
    byName.set(name, { mode: "040000", path: name, oid, type: "tree" });
  }
  // Listed as isomorphic-git lists a tree it reads (by name): cached or read, the same order.
  const tree = [...byName.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  const oid = writeTreeFast(repo, tree);
  // The next graft (the next version's snapshot) reads it from here, not from disk.
  rememberTree(repo, oid, tree);
  return oid;
}

/** The root tree id of a commit. */
export async function treeOf(repo: GitRepo, commit: string): Promise<string> {
  const { commit: object } = await git.readCommit({ ...base(repo), oid: commit });
  return object.tree;
}

export interface Signature {
  name: string;
  email: string;
  /** Seconds since 1970: from the cycle's receipt time, so the same input gives the same commit. */
  timestamp: number;
}

export async function writeCommit(
  repo: GitRepo,
  commit: { tree: string; parents: string[]; message: string; author: Signature },
): Promise<string> {
  const who = { ...commit.author, timezoneOffset: 0 };
  return git.writeCommit({
    ...base(repo),
    commit: {
      tree: commit.tree,
      parent: commit.parents,
      message: commit.message.endsWith("\n") ? commit.message : `${commit.message}\n`,
      author: who,
      committer: who,
    },
  });
}
