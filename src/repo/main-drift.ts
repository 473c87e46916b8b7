/**
 * Drift from main as git shows it, for whoever asks: the worker about its own branch, the
 * Director about each worker's last heartbeat. Commit times, never a clock.
 */

import { catalogHashOf } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import { type DriftVerdict, judgeDrift, type SyncPolicy } from "../core/swarm/drift.js";
import {
  commitsInRange,
  type GitRepo,
  readCommit,
  readFileAt,
  resolveCommit,
} from "../git/history.js";

/** Where main is looked for when no ref is given: the remote's view first. */
const MAIN_CANDIDATES = ["origin/main", "main", "origin/master", "master"];

export interface MainView {
  ref: string;
  sha: string;
  /** Committer time (seconds). */
  time: number;
  /** The catalog hash on main ("unreadable" for a damaged catalog), undefined without one. */
  catalogHash: string | undefined;
}

/** The given main ref, or the newest of the usual candidates; undefined when there is none. */
export async function findMain(repo: GitRepo, explicit?: string): Promise<MainView | undefined> {
  let best: { ref: string; sha: string; time: number } | undefined;
  for (const ref of explicit !== undefined ? [explicit] : MAIN_CANDIDATES) {
    let sha: string;
    try {
      sha = await resolveCommit(repo, ref);
    } catch (error) {
      if (explicit !== undefined) throw error;
      continue;
    }
    const time = (await readCommit(repo, sha)).commit.committer.timestamp;
    if (!best || time > best.time) best = { ref, sha, time };
  }
  if (!best) return undefined;
  return { ...best, catalogHash: await catalogHashAt(repo, best.sha) };
}

async function catalogHashAt(repo: GitRepo, sha: string): Promise<string | undefined> {
  const file = await readFileAt(repo, sha, CATALOG_PATH);
  if (!file) return undefined;
  try {
    return catalogHashOf(JSON.parse(file.text) as Record<string, unknown>);
  } catch {
    return "unreadable";
  }
}

/**
 * The verdict for a branch that left main at `ancestor` and sees `catalogHash`.
 */
export async function judgeAgainstMain(
  repo: GitRepo,
  main: MainView,
  seen: { ancestor: string | null; catalogHash: string },
  policy: SyncPolicy,
): Promise<DriftVerdict> {
  // No ancestor (unrelated histories, or a heartbeat without one): only the catalog is judged.
  let mergeBaseTime = main.time;
  let behind = 0;
  if (seen.ancestor !== null && seen.ancestor !== main.sha) {
    try {
      mergeBaseTime = (await readCommit(repo, seen.ancestor)).commit.committer.timestamp;
      behind = (await commitsInRange(repo, `${seen.ancestor}..${main.sha}`)).length;
    } catch {
      // Not a commit this repository knows (not fetched yet, or another history): no verdict
      // on how far behind is better than a wrong one; the catalog is still judged.
      mergeBaseTime = main.time;
      behind = 0;
    }
  }
  return judgeDrift({
    mainSha: main.sha,
    mainTime: main.time,
    mergeBaseTime,
    commitsBehind: behind,
    localCatalogHash: seen.catalogHash,
    mainCatalogHash: main.catalogHash,
    policy,
  });
}
