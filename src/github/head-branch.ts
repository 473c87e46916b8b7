import { headBranchProblem } from "../core/trust/engram-branch.js";
import { UsageError } from "../errors.js";

/** `branch`, when the Director may write it against `base`; a UsageError saying why not. */
export function checkHeadBranch(branch: string, base: string): string {
  const problem = headBranchProblem(branch, base);
  if (problem !== undefined) throw new UsageError(`head branch ${problem}`);
  return branch;
}
