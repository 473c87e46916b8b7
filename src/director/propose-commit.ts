import { FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { type ProposalRefs, proposalMessage } from "../core/proposal/plan.js";
import { type MemoryFiles, memoryChanges } from "../core/proposal/replay.js";
import { DIRECTOR_IDENTITY } from "../core/trust/engram-branch.js";
import { StateError } from "../errors.js";
import { type GitRepo, localBranches, mergeBase, resolveCommit } from "../git/history.js";
import { graftTree, treeOf, writeCommit, writeTextBlob, writeTextTree } from "../git/objects.js";
import {
  compareAndSwapRef,
  fetchBranches,
  PushError,
  pushWithLease,
  remoteHeads,
} from "../git/remote.js";
import { catalogAt, memoryFilesAt } from "../repo/memory-at.js";
import type { Catalog } from "../schema/engram.js";
import { assertOwnedCommits } from "./branch-owner.js";
import type { ProposeOptions } from "./propose-types.js";

const AUTHOR = DIRECTOR_IDENTITY;

export type Published =
  | { moved: true }
  | { moved: false; sha: string; via: "git" | "api" | "local" };

/**
 * Puts the built commit on the branch: `git push` under a lease, or the Git Data API (the
 * same files, one tree), or, with no remote, the local branch only. The local branch then
 * follows by git's compare-and-swap.
 */
export async function publish(
  repo: GitRepo,
  remote: string | null,
  refs: ProposalRefs,
  built: { sha: string; parent: string },
  files: MemoryFiles,
  options: ProposeOptions,
): Promise<Published> {
  // The push is forced (under a lease): never over a commit engram did not make.
  await assertOwnedCommits(repo, options.branch, refs);
  let sha = built.sha;
  let via: "git" | "api" | "local" = remote === null ? "local" : "git";
  if (remote !== null && !(options.preferApi && options.apiCommit)) {
    try {
      const pushed = await pushWithLease(repo.dir, remote, options.branch, sha, refs.branch);
      if (!pushed.pushed) return { moved: true };
    } catch (error) {
      if (!(error instanceof PushError) || !options.apiCommit) throw error;
      via = "api";
    }
  } else if (options.apiCommit) {
    via = "api";
  }
  if (via === "api" && options.apiCommit) {
    const parent = await memoryFilesAt(repo, built.parent);
    const changes = memoryChanges(parent.files, files.files).map((c) => ({
      ...c,
      path: `${repo.prefix}${c.path}`,
    }));
    const r = await options.apiCommit({
      branch: options.branch,
      parent: built.parent,
      files: changes,
      message: proposalMessage(files.catalog),
      expected: refs.branch,
    });
    if (r.moved) return { moved: true };
    if (r.sha === null) throw new StateError(`${options.branch}: the API commit changed nothing`);
    sha = r.sha;
    // The API made its own commit: fetch it, so the local branch can point at it.
    if (remote !== null) await fetchBranches(repo.dir, remote, [options.branch]);
  }
  const local = await localBranch(repo, options.branch);
  const swapped = await compareAndSwapRef(repo.dir, `refs/heads/${options.branch}`, sha, local);
  if (!swapped && via === "local") return { moved: true };
  return { moved: false, sha, via };
}

export async function readRefs(
  repo: GitRepo,
  remote: string | null,
  options: ProposeOptions,
): Promise<ProposalRefs> {
  if (remote === null) {
    let main: string;
    try {
      main = await resolveCommit(repo, options.base);
    } catch (error) {
      if (!(error instanceof StateError)) throw error;
      throw noBaseBranch("this repository", options, await localBranches(repo));
    }
    return { main, branch: await localBranch(repo, options.branch) };
  }
  const heads = await remoteHeads(repo.dir, remote, [options.base, options.branch]);
  await fetchBranches(repo.dir, remote, [...heads.keys()]);
  const main = heads.get(options.base);
  if (main === undefined) {
    // Only now list every head: the message names what the user can pass instead.
    const all = await remoteHeads(repo.dir, remote, []);
    throw noBaseBranch(remote, options, [...all.keys()].sort());
  }
  return { main, branch: heads.get(options.branch) ?? null };
}

const LISTED_BRANCHES = 10;

/** The base branch is missing: say where it is set and which branches there are. */
function noBaseBranch(where: string, options: ProposeOptions, branches: string[]): StateError {
  const others = branches.filter((b) => b !== options.branch);
  const listed = others.slice(0, LISTED_BRANCHES).join(", ");
  const more =
    others.length > LISTED_BRANCHES ? ` and ${others.length - LISTED_BRANCHES} more` : "";
  const found = others.length > 0 ? `its branches: ${listed}${more}` : "it has no branch yet";
  return new StateError(
    `${where} has no branch ${options.base} to propose memory against (${found}); ` +
      "name the base with --base BRANCH or [github] base_branch in the config",
  );
}

export async function localBranch(repo: GitRepo, branch: string): Promise<string | null> {
  try {
    return await resolveCommit(repo, `refs/heads/${branch}`);
  } catch {
    return null;
  }
}

export type Built =
  | { kind: "same-as-main" }
  | { kind: "same-as-branch" }
  | { kind: "commit"; sha: string; parent: string };

/**
 * The proposal as a commit: main's tree with `memory/` and MEMORY.md replaced. Its parent is
 * the branch when the branch already holds main and the staging tree grew from it (a plain
 * update); otherwise main (the branch is regenerated). It is never main itself.
 */
export async function buildCommit(
  repo: GitRepo,
  refs: ProposalRefs,
  files: MemoryFiles,
  startCatalog: Catalog,
): Promise<Built> {
  const memory = [...files.files]
    .filter(([path]) => path.startsWith(`${MEMORY_DIR}/`))
    .map(([path, text]) => ({ path: path.slice(MEMORY_DIR.length + 1), text }));
  const grafts = new Map<string, { type: "blob" | "tree"; oid: string } | null>();
  grafts.set(`${repo.prefix}${MEMORY_DIR}`, {
    type: "tree",
    oid: await writeTextTree(repo, memory),
  });
  const focus = files.files.get(FOCUS_PATH);
  if (focus !== undefined) {
    grafts.set(`${repo.prefix}${FOCUS_PATH}`, {
      type: "blob",
      oid: await writeTextBlob(repo, focus),
    });
  }
  const mainTree = await treeOf(repo, refs.main);
  const tree = await graftTree(repo, mainTree, grafts);
  if (tree === mainTree) return { kind: "same-as-main" };
  if (refs.branch !== null && (await treeOf(repo, refs.branch)) === tree) {
    return { kind: "same-as-branch" };
  }
  const grown = await branchGrows(repo, refs, startCatalog);
  const parent = grown ? (refs.branch as string) : refs.main;
  const sha = await writeCommit(repo, {
    tree,
    parents: [parent],
    message: proposalMessage(files.catalog),
    author: { ...AUTHOR, timestamp: Math.floor(Date.parse(files.catalog.created_at) / 1000) },
  });
  return { kind: "commit", sha, parent };
}

/** The branch already holds main and the staged proposal grew from the branch's catalog. */
export async function branchGrows(
  repo: GitRepo,
  refs: ProposalRefs,
  startCatalog: Catalog,
): Promise<boolean> {
  if (refs.branch === null) return false;
  if ((await mergeBase(repo, refs.branch, refs.main)) !== refs.main) return false;
  return (await catalogAt(repo, refs.branch)).hash === startCatalog.hash;
}
