/**
 * Drift from main as git shows it, for whoever asks: the worker about its own branch, the
 * Director about each worker's last heartbeat. Commit times, never a clock.
 */

import { catalogHashOf } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import { type DriftVerdict, judgeDrift, type SyncPolicy } from "../core/swarm/drift.js";
import { StateError } from "../errors.js";
import { commitsWithFile, commitTimes, countBetween, mergeBaseOf } from "../git/rev-reads.js";

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

/**
 * The given main ref, or the newest of the usual candidates, read through git in the engram
 * repository `repoDir`; undefined when there is none (or no git repository).
 */
export async function findMain(repoDir: string, explicit?: string): Promise<MainView | undefined> {
  return (await findMainAndHead(repoDir, explicit, false)).main;
}

/**
 * `findMain`, and HEAD's commit read in the same git call when `head` is asked (undefined for
 * a branch without commits yet).
 */
export async function findMainAndHead(
  repoDir: string,
  explicit: string | undefined,
  head = true,
): Promise<{ main: MainView | undefined; head: string | undefined }> {
  return newestOf(repoDir, explicit !== undefined ? [explicit] : MAIN_CANDIDATES, explicit, head);
}

/**
 * The base branch memory is confirmed on (`[github] base_branch`), as `worker check` finds
 * main: the newest of the remote's and the local branch, so that a clone whose local branch
 * is behind its fetched `origin/<base>` judges against what was merged. For `main`, the same
 * candidates `worker check` reads.
 */
export async function findBase(repoDir: string, base: string): Promise<MainView | undefined> {
  const refs = base === "main" ? MAIN_CANDIDATES : [`origin/${base}`, base];
  return (await newestOf(repoDir, refs, undefined, false)).main;
}

async function newestOf(
  repoDir: string,
  refs: readonly string[],
  explicit: string | undefined,
  head: boolean,
): Promise<{ main: MainView | undefined; head: string | undefined }> {
  // Each candidate's catalog comes in the same git call as the commits.
  const found = await commitsWithFile(repoDir, head ? [...refs, "HEAD"] : refs, {
    path: CATALOG_PATH,
    revs: refs,
  });
  if (found === undefined) return { main: undefined, head: undefined };
  if (explicit !== undefined && found[0] === undefined) {
    throw new StateError(`${explicit}: no branch, tag or commit of that name`);
  }
  let best: { ref: string; sha: string; time: number; text: string | undefined } | undefined;
  for (const [i, ref] of refs.entries()) {
    const commit = found[i];
    if (commit === undefined) continue;
    // Commit times have a second's grain: of two in the same second, the one that descends
    // from the other is the newer (a local main committed just after origin/main's).
    const newer =
      best === undefined ||
      commit.time > best.time ||
      (commit.time === best.time &&
        commit.sha !== best.sha &&
        (await mergeBaseOf(repoDir, best.sha, commit.sha)) === best.sha);
    if (newer) best = { ref, ...commit };
  }
  const headSha = head ? found[refs.length]?.sha : undefined;
  if (!best) return { main: undefined, head: headSha };
  const { text, ...main } = best;
  return { main: { ...main, catalogHash: catalogHashOfText(text) }, head: headSha };
}

function catalogHashOfText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return catalogHashOf(JSON.parse(text) as Record<string, unknown>);
  } catch {
    return "unreadable";
  }
}

/**
 * The verdict for a branch that left main at `ancestor` and sees `catalogHash`.
 */
export async function judgeAgainstMain(
  repoDir: string,
  main: MainView,
  seen: { ancestor: string | null; catalogHash: string },
  policy: SyncPolicy,
): Promise<DriftVerdict> {
  // No ancestor (unrelated histories, or a heartbeat without one): only the catalog is judged.
  let mergeBaseTime = main.time;
  let behind = 0;
  if (seen.ancestor !== null && seen.ancestor !== main.sha) {
    const [[ancestor], count] = await Promise.all([
      commitTimes(repoDir, [seen.ancestor]).then((c) => c ?? []),
      countBetween(repoDir, seen.ancestor, main.sha),
    ]);
    // Not a commit this repository knows (not fetched yet, or another history): no verdict
    // on how far behind is better than a wrong one; the catalog is still judged.
    if (ancestor !== undefined && count !== undefined) {
      mergeBaseTime = ancestor.time;
      behind = count;
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
