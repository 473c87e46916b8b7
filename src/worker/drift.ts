import { existsSync } from "node:fs";
import { type DriftVerdict, judgeDrift } from "../core/drift.js";
import { catalogHashOf } from "../core/engram.js";
import type { RepoContext } from "../director/context.js";
import { StateError } from "../errors.js";
import {
  commitsInRange,
  type GitRepo,
  mergeBase,
  openRepo,
  readCommit,
  readFileAt,
  resolveCommit,
} from "../git/history.js";
import { readCatalog } from "../repo/memory-tree.js";

/** Where main is looked for when `--main` is not given: the remote's view first. */
const MAIN_CANDIDATES = ["origin/main", "main", "origin/master", "master"];

export interface DriftReport extends DriftVerdict {
  main_ref: string;
  /** Where the worker's branch left main: what its heartbeats carry as `main_ancestor_sha`. */
  main_ancestor_sha: string | null;
}

/**
 * The worker's drift from main, read from local refs (a fetched `origin/main` counts; no
 * network call is made). Undefined when the repository is not a git repository or has no
 * main to compare with.
 */
export async function readDrift(
  ctx: RepoContext,
  mainRef?: string,
): Promise<DriftReport | undefined> {
  if (!existsSync(ctx.repoDir)) return undefined;
  let repo: GitRepo;
  try {
    repo = await openRepo(ctx.repoDir);
  } catch (error) {
    if (error instanceof StateError) return undefined;
    throw error;
  }
  const main = await findMain(repo, mainRef);
  if (!main) return undefined;
  const head = await resolveCommit(repo, "HEAD");
  const ancestor = (await mergeBase(repo, head, main.oid)) ?? null;
  const mainCommit = await readCommit(repo, main.oid);
  const baseTime = ancestor ? (await readCommit(repo, ancestor)).commit.committer.timestamp : 0;
  const behind =
    ancestor === main.oid ? 0 : (await commitsInRange(repo, `${head}..${main.oid}`)).length;
  const catalogAtMain = await readFileAt(repo, main.oid, "memory/catalog.json");
  let mainCatalogHash: string | undefined;
  if (catalogAtMain) {
    try {
      mainCatalogHash = catalogHashOf(JSON.parse(catalogAtMain.text) as Record<string, unknown>);
    } catch {
      mainCatalogHash = "unreadable";
    }
  }
  const local = await readCatalog(ctx.repoDir);
  const verdict = judgeDrift({
    mainSha: main.oid,
    mainTime: mainCommit.commit.committer.timestamp,
    mergeBaseTime: baseTime,
    commitsBehind: behind,
    localCatalogHash: local.hash,
    mainCatalogHash,
    policy: ctx.config.policy.sync_main,
  });
  return { ...verdict, main_ref: main.name, main_ancestor_sha: ancestor };
}

export async function findMain(
  repo: GitRepo,
  explicit: string | undefined,
): Promise<{ name: string; oid: string } | undefined> {
  if (explicit !== undefined) return { name: explicit, oid: await resolveCommit(repo, explicit) };
  let best: { name: string; oid: string; time: number } | undefined;
  for (const name of MAIN_CANDIDATES) {
    let oid: string;
    try {
      oid = await resolveCommit(repo, name);
    } catch {
      continue;
    }
    const time = (await readCommit(repo, oid)).commit.committer.timestamp;
    if (!best || time > best.time) best = { name, oid, time };
  }
  return best;
}
