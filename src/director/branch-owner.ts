import { foreignCommitReason, headBranchProblem } from "../core/trust/engram-branch.js";
import { StateError, UsageError } from "../errors.js";
import { changedPaths, type GitRepo, revList } from "../git/history.js";

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
