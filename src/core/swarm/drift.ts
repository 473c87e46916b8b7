/** What `[policy.sync_main]` allows before a worker must bring main in. */
import { CATALOG_PATH } from "../model/paths.js";
export interface SyncPolicy {
  max_commits_behind: number;
  max_seconds_behind: number;
  require_catalog_hash_match: boolean;
  /** How a worker brings main in when it must. */
  required_action: SyncAction;
}

export type SyncAction = "merge_main" | "rebase_main";

export interface DriftInput {
  /** The tip of main as the worker knows it, and its committer time (seconds). */
  mainSha: string;
  mainTime: number;
  /** Where the worker's branch left main, and its committer time. */
  mergeBaseTime: number;
  /** Commits on main that the worker's branch lacks. */
  commitsBehind: number;
  /** The catalog the worker sees (its work tree) and main's. */
  localCatalogHash: string;
  mainCatalogHash: string | undefined;
  policy: SyncPolicy;
}

export type SyncReason = "behind_main" | "catalog_mismatch";

export interface DriftVerdict {
  sync_required: boolean;
  reason: SyncReason | null;
  required_action: SyncAction | null;
  main_sha_expected: string;
  catalog_hash_expected: string | null;
  commits_behind: number;
  seconds_behind: number;
  detail: string;
}

/**
 * Whether a worker must sync with main, by `[policy.sync_main]`: too many commits or too
 * much time behind main (`behind_main`), or a catalog other than main's while the policy
 * asks for a match (`catalog_mismatch`). Times are commit times, never a clock.
 */
export function judgeDrift(input: DriftInput): DriftVerdict {
  const secondsBehind = Math.max(0, input.mainTime - input.mergeBaseTime);
  const { policy } = input;
  const base = {
    main_sha_expected: input.mainSha,
    catalog_hash_expected: input.mainCatalogHash ?? null,
    commits_behind: input.commitsBehind,
    seconds_behind: secondsBehind,
  };
  if (
    input.commitsBehind > policy.max_commits_behind ||
    secondsBehind > policy.max_seconds_behind
  ) {
    return {
      ...base,
      sync_required: true,
      reason: "behind_main",
      required_action: policy.required_action,
      detail:
        `${input.commitsBehind} commit(s) and ${secondsBehind} s behind main ` +
        `(policy: at most ${policy.max_commits_behind} commits, ${policy.max_seconds_behind} s)`,
    };
  }
  if (
    policy.require_catalog_hash_match &&
    input.mainCatalogHash !== undefined &&
    input.mainCatalogHash !== input.localCatalogHash
  ) {
    return {
      ...base,
      sync_required: true,
      reason: "catalog_mismatch",
      required_action: policy.required_action,
      detail:
        `${CATALOG_PATH} is ${input.localCatalogHash}, main's is ${input.mainCatalogHash} ` +
        "(merge main; memory changed here and not on main is the Director's to propose)",
    };
  }
  return {
    ...base,
    sync_required: false,
    reason: null,
    required_action: null,
    detail: "in sync with main",
  };
}

/** What only the worker's own checkout can tell: its work tree and HEAD, besides main. */
export type CheckoutReason = SyncReason | "uncommitted_memory";
export type CheckoutAction = SyncAction | "commit_memory";

export interface CheckoutVerdict extends Omit<DriftVerdict, "reason" | "required_action"> {
  reason: CheckoutReason | null;
  required_action: CheckoutAction | null;
}

/** The command a `commit_memory` verdict asks for, as `worker check` prints it. */
export const COMMIT_MEMORY_COMMAND = 'git add memory MEMORY.md && git commit -m "engram: memory"';

/**
 * The verdict for the worker's own checkout, which knows its work tree and HEAD: a sync is
 * required only when bringing main in can change what the worker sees, so `worker sync`
 * always has something to do when `worker check` asks for it.
 * - The work tree's catalog is not HEAD's (a `director run` wrote memory here, not committed
 *   yet): `uncommitted_memory`, commit it; a merge would refuse the dirty tree anyway.
 * - Main is merged here already and only the catalog differs: this branch committed memory
 *   main has not got yet (the Director's checkout before its push, a memory branch). Its
 *   memory is not stale; it reaches main when this branch does, so no sync is required.
 */
export function judgeCheckout(
  verdict: DriftVerdict,
  checkout: { catalogUncommitted: boolean; mainMerged: boolean },
): CheckoutVerdict {
  if (verdict.sync_required && checkout.catalogUncommitted) {
    return {
      ...verdict,
      sync_required: false,
      reason: "uncommitted_memory",
      required_action: "commit_memory",
      detail:
        `${CATALOG_PATH} in the work tree is not the one committed at HEAD ` +
        `(a director run's output, not committed yet): commit it: ${COMMIT_MEMORY_COMMAND}`,
    };
  }
  if (verdict.reason === "catalog_mismatch" && checkout.mainMerged) {
    return {
      ...verdict,
      sync_required: false,
      reason: null,
      required_action: null,
      detail:
        `this branch's memory (${CATALOG_PATH}) was committed after main's ` +
        `(${verdict.catalog_hash_expected}) and reaches main when this branch does`,
    };
  }
  return verdict;
}
