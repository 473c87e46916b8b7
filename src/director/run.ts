import type { RepoContext } from "../context/repo-context.js";
import { type RunOptions, type RunResult, runCycleOn } from "./cycle.js";
import { withDirectorState } from "./director-state.js";

// The cycle itself lives in cycle.ts (below director-state.ts, whose settle runs it).
export {
  type CyclePlanFiles,
  type RunOptions,
  type RunResult,
  runCycleOn,
  settleCycle,
} from "./cycle.js";
export { drainSpool } from "./spool-drain.js";

/**
 * One Director cycle on the local repository: drain the spool, compact the oldest events if
 * the buffer calls for it, promote, evict, write the catalog and MEMORY.md. The plan is made
 * durable as an intent before any file changes, so a crash at any point is finished by the
 * next run and loses nothing.
 */
export async function runCycle(ctx: RepoContext, options: RunOptions = {}): Promise<RunResult> {
  // The cycle itself takes what the spool's compactions for room made: nothing to settle after.
  return withDirectorState(ctx, (buffer) => runCycleOn(ctx, buffer, options), {
    settle: options.dryRun !== true,
  });
}
