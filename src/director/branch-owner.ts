import {
  foreignCommitReason,
  headBranchProblem,
  isMemoryPath,
} from "../core/trust/engram-branch.js";
import { StateError, UsageError } from "../errors.js";
import {
  changedPaths,
  type GitRepo,
  mergeBase,
  readCommit,
  readFileAt,
  revList,
} from "../git/history.js";

/**
 * What engram owns: an `engram/` branch other than the base, whose commits beyond the base
 * are all the Director's (its identity, one parent, memory paths only). The Director checks
 * it before moving its branch (a lease push is forced, and would lose anyone else's commit);
 * the guard checks it before taking a head branch for the Director's.
 */

/** Most commits read for the check; a branch with more is not the Director's anyway. */
const MAX_COMMITS = 500;

export interface ForeignCommit {
  sha: string;
  reason: string;
}

export function assertOwnedName(branch: string, base: string): void {
  const problem = headBranchProblem(branch, base);
  if (problem !== undefined) throw new UsageError(`--branch / [github] head_branch ${problem}`);
}

/** The commits of `tip` not reachable from `base` that the Director did not make, oldest first. */
export async function foreignCommits(
  repo: GitRepo,
  base: string,
  tip: string,
): Promise<ForeignCommit[]> {
  const commits = (await revList(repo, [tip], [base])).reverse();
  if (commits.length > MAX_COMMITS) {
    return [
      { sha: tip, reason: `${commits.length} commits beyond the base, more than any proposal` },
    ];
  }
  const out: ForeignCommit[] = [];
  for (const { oid, commit } of commits) {
    if (await bringsInBaseOnly(repo, base, oid, commit.parent)) continue;
    const all = await changedPaths(repo, commit.parent[0], oid);
    const outside = all.find((p) => !p.startsWith(repo.prefix));
    const reason =
      outside !== undefined
        ? `changes ${outside}, outside the engram repository`
        : foreignCommitReason({
            sha: oid,
            author: `${commit.author.name} <${commit.author.email}>`,
            files: all.map((p) => p.slice(repo.prefix.length)),
            parents: commit.parent.length,
          });
    if (reason !== undefined) out.push({ sha: oid, reason });
  }
  return out;
}

/**
 * A merge of the base into the branch (GitHub's "Update branch"): its second parent is in the
 * base, and every path it changes besides memory is as that parent has it. Rebuilding the
 * branch on the base loses nothing of it, so it is not counted as someone else's work.
 */
async function bringsInBaseOnly(
  repo: GitRepo,
  base: string,
  oid: string,
  parents: readonly string[],
): Promise<boolean> {
  const [first, merged] = parents;
  if (parents.length !== 2 || first === undefined || merged === undefined) return false;
  if ((await mergeBase(repo, merged, base)) !== merged) return false;
  // Memory too: a merge that writes memory of its own is a commit like any other.
  return takesOnly(repo, oid, first, merged, { memory: true });
}

/**
 * Whether every path `oid` changes against `from`, besides memory (unless `memory`), is as
 * `to` has it: the commit adds nothing of its own to what it merges.
 */
export async function takesOnly(
  repo: GitRepo,
  oid: string,
  from: string,
  to: string,
  options: { memory?: boolean } = {},
): Promise<boolean> {
  for (const path of await changedPaths(repo, from, oid)) {
    if (!path.startsWith(repo.prefix)) return false;
    const rel = path.slice(repo.prefix.length);
    if (isMemoryPath(rel) && options.memory !== true) continue;
    const [mine, theirs] = await Promise.all([
      readFileAt(repo, oid, rel),
      readFileAt(repo, to, rel),
    ]);
    if (mine?.oid !== theirs?.oid) return false;
  }
  return true;
}

/**
 * The branch's own tip: `head` itself, or for the merge commit a pull_request workflow checks
 * out (first parent on the base's line, adding nothing of its own) its second parent.
 */
export async function branchTip(repo: GitRepo, base: string, head: string): Promise<string> {
  const { commit } = await readCommit(repo, head);
  const [first, second] = commit.parent;
  if (commit.parent.length !== 2 || first === undefined || second === undefined) return head;
  const fork = await mergeBase(repo, first, base);
  if (fork !== first && fork !== base) return head;
  return (await takesOnly(repo, head, first, second)) ? second : head;
}

/** Refuses to move `branch` when it holds a commit engram did not make. */
export async function assertOwnedCommits(
  repo: GitRepo,
  branch: string,
  refs: { main: string; branch: string | null },
): Promise<void> {
  if (refs.branch === null || refs.branch === refs.main) return;
  const [first] = await foreignCommits(repo, refs.main, refs.branch);
  if (first === undefined) return;
  throw new StateError(
    `${branch} holds commit ${first.sha.slice(0, 12)} that engram did not make (${first.reason}): ` +
      "the Director rewrites its branch on every proposal and would lose it. Move that work to " +
      `a branch of its own, then delete ${branch} (or name another engram/ branch with --branch ` +
      "or [github] head_branch)",
  );
}
