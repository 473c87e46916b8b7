import { FOCUS_PATH, MEMORY_DIR } from "../model/paths.js";

/**
 * What makes a branch and a commit engram's own. The Director writes only `engram/...`
 * branches, never the base branch, and its commits carry its identity and change memory
 * only; anything else on such a branch is someone else's work, which engram never rewrites
 * and the guard never takes for the Director's.
 */

/** Head branches with this prefix are the Director's, machine-owned (`engram/memory`). */
export const DIRECTOR_BRANCH_PREFIX = "engram/";

/** The author of every commit the Director makes (a git push or the Git Data API). */
export const DIRECTOR_IDENTITY = { name: "engram director", email: "director@engram.invalid" };

/** Whether a path is durable memory, which only the Director writes (invariant 6). */
export function isMemoryPath(path: string): boolean {
  return path === FOCUS_PATH || path === MEMORY_DIR || path.startsWith(`${MEMORY_DIR}/`);
}

/**
 * Why `branch` cannot hold the Director's proposals against `base`, or undefined when it
 * can: only an `engram/` branch, never the base branch itself.
 */
export function headBranchProblem(branch: string, base: string): string | undefined {
  if (branch === base) {
    return `is the base branch ${base}: the Director proposes memory on a branch of its own, never on the branch it proposes to`;
  }
  if (
    !branch.startsWith(DIRECTOR_BRANCH_PREFIX) ||
    branch.length === DIRECTOR_BRANCH_PREFIX.length
  ) {
    return `${JSON.stringify(branch)} is not an ${DIRECTOR_BRANCH_PREFIX}... branch: the Director writes (and force-moves) only branches it owns, such as engram/memory`;
  }
  return undefined;
}

/** One commit as `git log` shows it: `Name <email>` and the paths it changed. */
export interface CommitFacts {
  sha: string;
  author: string;
  /** Paths relative to the engram repository. */
  files: readonly string[];
  /** Number of parents: the Director never makes a merge. */
  parents: number;
}

/**
 * Why a commit is not one the Director made, or undefined when it is: its author is the
 * Director's identity, it has one parent, and it changes memory paths only.
 */
export function foreignCommitReason(commit: CommitFacts): string | undefined {
  const director = `${DIRECTOR_IDENTITY.name} <${DIRECTOR_IDENTITY.email}>`;
  if (commit.author !== director) return `authored by ${commit.author}, not ${director}`;
  if (commit.parents > 1) return "a merge commit";
  const other = commit.files.find((f) => !isMemoryPath(f));
  if (other !== undefined) return `changes ${other}, which is not memory`;
  return undefined;
}
