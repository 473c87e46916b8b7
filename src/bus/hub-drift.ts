import { type DriftVerdict, judgeDrift, type SyncPolicy } from "../core/drift.js";
import { catalogHashOf } from "../core/engram.js";
import { EngramError } from "../errors.js";
import {
  commitsInRange,
  type GitRepo,
  openRepo,
  readCommit,
  readFileAt,
  resolveCommit,
} from "../git/history.js";
import { findMain } from "../worker/drift.js";

/** What a worker's hello or heartbeat says about its view of main. */
export interface WorkerView {
  main_ancestor_sha?: string | undefined;
  catalog_hash_seen?: string | undefined;
}

/** The payload of `sync_required.v1`. */
export interface SyncRequiredPayload {
  reason: "behind_main" | "catalog_mismatch";
  main_sha_expected: string;
  catalog_hash_expected?: string;
  policy: SyncPolicy;
  required_action: "merge_main";
  commits_behind: number;
  seconds_behind: number;
  detail: string;
}

const TIP_FRESH_MS = 1000;

interface MainTip {
  oid: string;
  time: number;
  catalogHash: string | undefined;
}

/**
 * Judges workers against the Director's own view of main (its local refs, `origin/main`
 * first, as `worker check` reads them; no network call). A worker whose main ancestor the
 * Director does not know (not fetched yet, or another history) is not judged: no verdict
 * is better than a wrong one.
 */
export class MainJudge {
  private repo: GitRepo | null | undefined;
  private tip: MainTip | undefined;
  private tipReadAt = 0;
  private readonly behind = new Map<string, { count: number; time: number } | null>();

  constructor(
    private readonly repoDir: string,
    private readonly policy: SyncPolicy,
  ) {}

  /** The sync the worker must do, or undefined when it is within the policy (or not judged). */
  async judge(view: WorkerView): Promise<SyncRequiredPayload | undefined> {
    const tip = await this.mainTip();
    if (!tip || !this.repo) return undefined;
    let commitsBehind = 0;
    let mergeBaseTime = tip.time;
    if (view.main_ancestor_sha !== undefined) {
      const base = await this.behindOf(this.repo, view.main_ancestor_sha, tip.oid);
      if (!base) return undefined;
      commitsBehind = base.count;
      mergeBaseTime = base.time;
    }
    const verdict: DriftVerdict = judgeDrift({
      mainSha: tip.oid,
      mainTime: tip.time,
      mergeBaseTime,
      commitsBehind,
      // A worker that says nothing of its catalog is not judged on it.
      localCatalogHash: view.catalog_hash_seen ?? tip.catalogHash ?? "",
      mainCatalogHash: tip.catalogHash,
      policy: this.policy,
    });
    if (!verdict.sync_required || verdict.reason === null) return undefined;
    return {
      reason: verdict.reason,
      main_sha_expected: verdict.main_sha_expected,
      ...(verdict.catalog_hash_expected !== null
        ? { catalog_hash_expected: verdict.catalog_hash_expected }
        : {}),
      policy: this.policy,
      required_action: "merge_main",
      commits_behind: verdict.commits_behind,
      seconds_behind: verdict.seconds_behind,
      detail: verdict.detail,
    };
  }

  /** Main's tip (a ref read, at most once a second); what hangs off it is cached by commit. */
  private async mainTip(): Promise<MainTip | undefined> {
    if (this.repo === undefined) {
      try {
        this.repo = await openRepo(this.repoDir);
      } catch (error) {
        if (!(error instanceof EngramError)) throw error;
        this.repo = null;
      }
    }
    if (!this.repo) return undefined;
    // Refs are read again at most once a second: every hello and heartbeat asks.
    const now = Date.now();
    if (this.tip && now - this.tipReadAt < TIP_FRESH_MS) return this.tip;
    this.tipReadAt = now;
    const main = await findMain(this.repo, undefined);
    if (!main) return undefined;
    if (this.tip?.oid === main.oid) return this.tip;
    const commit = await readCommit(this.repo, main.oid);
    const catalog = await readFileAt(this.repo, main.oid, "memory/catalog.json");
    let catalogHash: string | undefined;
    if (catalog) {
      try {
        catalogHash = catalogHashOf(JSON.parse(catalog.text) as Record<string, unknown>);
      } catch {
        catalogHash = "unreadable";
      }
    }
    this.tip = { oid: main.oid, time: commit.commit.committer.timestamp, catalogHash };
    this.behind.clear();
    return this.tip;
  }

  private async behindOf(
    repo: GitRepo,
    ancestor: string,
    mainOid: string,
  ): Promise<{ count: number; time: number } | undefined> {
    const cached = this.behind.get(ancestor);
    if (cached !== undefined) return cached ?? undefined;
    let result: { count: number; time: number } | null = null;
    try {
      const oid = await resolveCommit(repo, ancestor);
      const time = (await readCommit(repo, oid)).commit.committer.timestamp;
      const count = oid === mainOid ? 0 : (await commitsInRange(repo, `${oid}..${mainOid}`)).length;
      result = { count, time };
    } catch (error) {
      if (!(error instanceof EngramError) && !isGitNotFound(error)) throw error;
    }
    // A bounded cache: heartbeats of a large swarm name a handful of ancestors.
    if (this.behind.size > 1024) this.behind.clear();
    this.behind.set(ancestor, result);
    return result ?? undefined;
  }
}

function isGitNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "NotFoundError" || code === "ObjectTypeError";
}
