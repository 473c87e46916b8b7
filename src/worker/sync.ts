import type { RepoContext } from "../context/repo-context.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import type { SyncAction } from "../core/swarm/drift.js";
import { StateError, UsageError } from "../errors.js";
import { openRepo } from "../git/history.js";
import { fetchOrigin, gitAt } from "../git/remote.js";
import { type DriftReport, readDrift } from "../repo/drift.js";
import { readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";

export interface SyncResult {
  /** Whether main was brought in by this run. */
  synced: boolean;
  /** Why (the drift reason), or why not. */
  reason: string;
  action: SyncAction | null;
  main_ref: string | null;
  main_sha: string | null;
  /** Whether `origin` was fetched first (false: no such remote, or unreachable). */
  fetched: boolean;
  before: { catalog_version: number; catalog_hash: string };
  after: { catalog_version: number; catalog_hash: string };
  /** Engram files main brought in, and those it evicted. */
  engrams_added: string[];
  engrams_removed: string[];
  /** Whether MEMORY.md changed. */
  focus_changed: boolean;
}

export interface SyncOptions {
  main?: string | undefined;
  /** Overrides the action the drift calls for. */
  action?: SyncAction | undefined;
  /** Sync even when the policy does not require it. */
  force?: boolean;
}

/**
 * `worker sync`: brings main into the worker's branch when `[policy.sync_main]` requires it
 * (or when forced), by merge or rebase, and reports what memory changed. Memory is never
 * edited by the worker: its memory is whatever main's is after the sync.
 */
export async function syncWithMain(ctx: RepoContext, options: SyncOptions): Promise<SyncResult> {
  const repo = await openRepo(ctx.repoDir);
  const git = gitAt(repo.dir);
  const fetched = await fetchOrigin(repo.dir);
  const drift = await readDrift(ctx.repoDir, ctx.config.policy.sync_main, options.main);
  const before = await readCatalog(ctx.repoDir);
  const stamp = (c: Catalog) => ({ catalog_version: c.catalog_version, catalog_hash: c.hash });
  const idle = (reason: string): SyncResult => ({
    synced: false,
    reason,
    action: null,
    main_ref: drift?.main_ref ?? null,
    main_sha: drift?.main_sha_expected ?? null,
    fetched,
    before: stamp(before),
    after: stamp(before),
    engrams_added: [],
    engrams_removed: [],
    focus_changed: false,
  });
  if (!drift) return idle("no main to sync with");
  // What check asks of this checkout is not a sync: say so as check does, never "nothing to do".
  if (drift.reason === "uncommitted_memory") {
    throw new StateError(`nothing to bring in from ${drift.main_ref}: ${drift.detail}`);
  }
  if (!drift.sync_required && !options.force) return idle(drift.detail);
  // Required with nothing behind (histories git cannot relate): the merge is tried and says why.
  if (!drift.sync_required && drift.commits_behind === 0) {
    return idle(`main has nothing this branch lacks (${drift.detail})`);
  }

  const dirty = (await git.raw(["status", "--porcelain", "--untracked-files=no"])).trim();
  if (dirty !== "") {
    throw new StateError(
      `the work tree has uncommitted changes; commit or stash them before syncing with ${drift.main_ref}:\n${dirty}`,
    );
  }
  const action =
    options.action ?? (drift.required_action === "rebase_main" ? "rebase_main" : "merge_main");
  const focusBefore = await focusBlob(git);
  await bringIn(git, action, drift);
  const after = await readCatalog(ctx.repoDir);
  const beforePaths = new Set(before.entries.map((e) => e.path));
  const afterPaths = new Set(after.entries.map((e) => e.path));
  return {
    synced: true,
    reason: drift.sync_required ? (drift.reason ?? "required") : "forced",
    action,
    main_ref: drift.main_ref,
    main_sha: drift.main_sha_expected,
    fetched,
    before: stamp(before),
    after: stamp(after),
    engrams_added: [...afterPaths].filter((p) => !beforePaths.has(p)).sort(),
    engrams_removed: [...beforePaths].filter((p) => !afterPaths.has(p)).sort(),
    focus_changed: focusBefore !== (await focusBlob(git)),
  };
}

async function focusBlob(git: ReturnType<typeof gitAt>): Promise<string | null> {
  try {
    return (await git.raw(["rev-parse", `HEAD:${FOCUS_PATH}`])).trim();
  } catch {
    return null;
  }
}

async function bringIn(
  git: ReturnType<typeof gitAt>,
  action: SyncAction,
  drift: DriftReport,
): Promise<void> {
  const main = drift.main_sha_expected;
  try {
    if (action === "merge_main") {
      await git.raw(["merge", "--no-edit", "-m", `Merge ${drift.main_ref} (worker sync)`, main]);
    } else {
      await git.raw(["rebase", main]);
    }
  } catch (error) {
    const conflicts = (await git.raw(["diff", "--name-only", "--diff-filter=U"]))
      .split("\n")
      .filter((l) => l.trim() !== "");
    await git.raw([action === "merge_main" ? "merge" : "rebase", "--abort"]).catch(() => {});
    throw new StateError(
      `${action === "merge_main" ? "merging" : "rebasing on"} ${drift.main_ref} stopped${
        conflicts.length > 0 ? ` on conflicts in ${conflicts.join(", ")}` : ""
      }; nothing was changed. Resolve by hand: git ${action === "merge_main" ? "merge" : "rebase"} ${drift.main_ref}\n${(error as Error).message.split("\n")[0]}`,
    );
  }
}

export function parseSyncAction(text: string | undefined): SyncAction | undefined {
  if (text === undefined) return undefined;
  if (text === "merge" || text === "merge_main") return "merge_main";
  if (text === "rebase" || text === "rebase_main") return "rebase_main";
  throw new UsageError(`--action: expected merge or rebase, got "${text}"`);
}
