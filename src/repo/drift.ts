import { existsSync } from "node:fs";
import { CATALOG_PATH } from "../core/model/paths.js";
import { type CheckoutVerdict, judgeCheckout, type SyncPolicy } from "../core/swarm/drift.js";
import { StateError } from "../errors.js";
import { gitText } from "../git/git-child.js";
import { mergeBaseOf } from "../git/rev-reads.js";
import { findMainAndHead, judgeAgainstMain } from "./main-drift.js";
import { readCatalogShape } from "./memory-tree.js";

export interface DriftReport extends CheckoutVerdict {
  main_ref: string;
  /** Where the worker's branch left main: what its heartbeats carry as `main_ancestor_sha`. */
  main_ancestor_sha: string | null;
}

/**
 * The worker's drift from main, read from local refs (a fetched `origin/main` counts; no
 * network call is made) through git itself, and judged for this checkout (its work tree and
 * HEAD). Undefined when the repository is not a git repository or has no main to compare with.
 */
export async function readDrift(
  repoDir: string,
  policy: SyncPolicy,
  mainRef?: string,
): Promise<DriftReport | undefined> {
  if (!existsSync(repoDir)) return undefined;
  const { main, head } = await findMainAndHead(repoDir, mainRef);
  if (!main) return undefined;
  if (head === undefined) throw new StateError(`HEAD: no commits yet in ${repoDir}`);
  const [base, local] = await Promise.all([
    // Both are commits git named: on main itself, the merge base is main (no git started).
    head === main.sha ? head : mergeBaseOf(repoDir, head, main.sha),
    readCatalogShape(repoDir),
  ]);
  const ancestor = base ?? null;
  const verdict = await judgeAgainstMain(
    repoDir,
    main,
    { ancestor, catalogHash: local.hash },
    policy,
  );
  const judged = verdict.sync_required
    ? judgeCheckout(verdict, {
        catalogUncommitted: await catalogUncommitted(repoDir),
        mainMerged: ancestor === main.sha,
      })
    : verdict;
  return { ...judged, main_ref: main.ref, main_ancestor_sha: ancestor };
}

/**
 * Whether the work tree's catalog differs from HEAD's (modified, new or deleted), by git
 * itself; `--no-optional-locks`: a check never writes the index.
 */
async function catalogUncommitted(repoDir: string): Promise<boolean> {
  const stdout = await gitText(repoDir, [
    "--no-optional-locks",
    "status",
    "--porcelain",
    "--",
    `:(literal)${CATALOG_PATH}`,
  ]);
  return stdout !== undefined && stdout.trim() !== "";
}
