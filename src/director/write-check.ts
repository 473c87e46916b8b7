import type { RepoContext } from "../context/repo-context.js";
import { formatFinding } from "../core/checks/findings.js";
import { checkMemoryWrites, type MemoryWrite } from "../core/checks/write-check.js";

/**
 * Refuses a step whose files its readers would refuse, before its intent is written: a bug
 * then stops one command with a clear error instead of landing in the repository, where it
 * would stop every command after it. Thrown as a plain `Error` (a bug: exit 70, with the
 * stack), never as an `EngramError`: the input was checked at the boundary already.
 */
export function checkWrites(ctx: RepoContext, writes: readonly MemoryWrite[]): void {
  const findings = checkMemoryWrites(writes, ctx.config);
  if (findings.length === 0) return;
  const shown = findings.slice(0, 5).map(formatFinding).join("; ");
  const more = findings.length > 5 ? ` (and ${findings.length - 5} more)` : "";
  throw new Error(
    `refusing to write memory its readers would refuse, nothing was written: ${shown}${more}. This is a bug in engram: please report it with the input that led to it`,
  );
}
