import { existsSync } from "node:fs";
import type { DriftVerdict, SyncPolicy } from "../core/swarm/drift.js";
import { StateError } from "../errors.js";
import { commitTimes, mergeBaseOf } from "../git/rev-reads.js";
import { findMain, judgeAgainstMain } from "./main-drift.js";
import { readCatalog } from "./memory-tree.js";

export interface DriftReport extends DriftVerdict {
  main_ref: string;
  /** Where the worker's branch left main: what its heartbeats carry as `main_ancestor_sha`. */
  main_ancestor_sha: string | null;
}

/**
 * The worker's drift from main, read from local refs (a fetched `origin/main` counts; no
 * network call is made) through git itself. Undefined when the repository is not a git
 * repository or has no main to compare with.
 */
export async function readDrift(
  repoDir: string,
  policy: SyncPolicy,
  mainRef?: string,
): Promise<DriftReport | undefined> {
  if (!existsSync(repoDir)) return undefined;
  const main = await findMain(repoDir, mainRef);
  if (!main) return undefined;
  const head = (await commitTimes(repoDir, ["HEAD"]))?.[0];
  if (head === undefined) throw new StateError(`HEAD: no commits yet in ${repoDir}`);
  const ancestor = (await mergeBaseOf(repoDir, head.sha, main.sha)) ?? null;
  const local = await readCatalog(repoDir);
  const verdict = await judgeAgainstMain(
    repoDir,
    main,
    { ancestor, catalogHash: local.hash },
    policy,
  );
  return { ...verdict, main_ref: main.ref, main_ancestor_sha: ancestor };
}
