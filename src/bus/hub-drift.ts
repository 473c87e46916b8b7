import { telemetryFields } from "../core/ingest/telemetry-fields.js";
import type { SyncAction, SyncPolicy } from "../core/swarm/drift.js";
import { findMain, judgeAgainstMain, type MainView } from "../repo/main-drift.js";

/** What a worker's hello or heartbeat says about its view of main. */
export interface WorkerView {
  main_ancestor_sha?: string | undefined;
  catalog_hash_seen?: string | undefined;
}

/**
 * The view of main a hello or heartbeat payload states: upstream's nested `repo` (a hello's,
 * or a heartbeat's `state.repo`) or our flat fields.
 */
export function workerViewOf(messageType: string, payload: Record<string, unknown>): WorkerView {
  const t = telemetryFields(messageType, payload);
  return { main_ancestor_sha: t.main_ancestor_sha, catalog_hash_seen: t.catalog_hash_seen };
}

/** The payload of `sync_required.v1`. */
export interface SyncRequiredPayload {
  reason: "behind_main" | "catalog_mismatch";
  main_sha_expected: string;
  catalog_hash_expected?: string;
  policy: SyncPolicy;
  required_action: SyncAction;
  commits_behind: number;
  seconds_behind: number;
  detail: string;
}

const TIP_FRESH_MS = 1000;
/** Verdicts are reused while main's tip stays the same, at most this long. */
const VERDICT_FRESH_MS = 10_000;
const VERDICTS_MAX = 1024;
/** Judgements reading git at once: fifty workers saying hello together spawn two gits, not 100. */
const JUDGING_MAX = 2;

/**
 * Judges workers against the Director's own view of main (its local refs, `origin/main`
 * first, as `worker check` reads them; no network call), by `[policy.sync_main]`. A worker
 * whose main ancestor the Director does not know is judged on its catalog only. Workers that
 * start together mostly share a view of main: each view is judged once per tip (the same
 * promise for all who ask), and at most `JUDGING_MAX` judgements read git at a time.
 */
export class MainJudge {
  private tip: Promise<MainView | undefined> | undefined;
  private tipReadAt = 0;
  private verdicts = new Map<string, Promise<SyncRequiredPayload | undefined>>();
  private verdictsOf: { sha: string; since: number } | undefined;
  private judging = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly repoDir: string,
    private readonly policy: SyncPolicy,
  ) {}

  /** The sync the worker must do, or undefined when it is within the policy (or not judged). */
  async judge(view: WorkerView): Promise<SyncRequiredPayload | undefined> {
    const tip = await this.mainTip();
    if (!tip) return undefined;
    const now = Date.now();
    if (this.verdictsOf?.sha !== tip.sha || now - this.verdictsOf.since > VERDICT_FRESH_MS) {
      this.verdicts = new Map();
      this.verdictsOf = { sha: tip.sha, since: now };
    }
    const key = `${view.main_ancestor_sha ?? ""}\n${view.catalog_hash_seen ?? ""}`;
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      verdict = this.limited(() => this.verdict(tip, view));
      // A failed read is not remembered: the next hello tries again.
      verdict.catch(() => this.verdicts.delete(key));
      if (this.verdicts.size < VERDICTS_MAX) this.verdicts.set(key, verdict);
    }
    return verdict;
  }

  private async verdict(tip: MainView, view: WorkerView): Promise<SyncRequiredPayload | undefined> {
    const verdict = await judgeAgainstMain(
      this.repoDir,
      tip,
      {
        ancestor: view.main_ancestor_sha ?? null,
        // A worker that says nothing of its catalog is not judged on it.
        catalogHash: view.catalog_hash_seen ?? tip.catalogHash ?? "",
      },
      this.policy,
    );
    if (!verdict.sync_required || verdict.reason === null || verdict.required_action === null) {
      return undefined;
    }
    return {
      reason: verdict.reason,
      main_sha_expected: verdict.main_sha_expected,
      ...(verdict.catalog_hash_expected !== null
        ? { catalog_hash_expected: verdict.catalog_hash_expected }
        : {}),
      policy: this.policy,
      required_action: verdict.required_action,
      commits_behind: verdict.commits_behind,
      seconds_behind: verdict.seconds_behind,
      detail: verdict.detail,
    };
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    while (this.judging >= JUDGING_MAX) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.judging++;
    try {
      return await work();
    } finally {
      this.judging--;
      this.waiting.shift()?.();
    }
  }

  /** Main's tip and its catalog hash, as a welcome states them; undefined without a main. */
  async expected(): Promise<{ sha: string; catalogHash: string | undefined } | undefined> {
    const tip = await this.mainTip();
    return tip ? { sha: tip.sha, catalogHash: tip.catalogHash } : undefined;
  }

  /**
   * Main's tip, read again at most once a second: every hello and heartbeat asks, and those
   * asking while it is read share that read.
   */
  private mainTip(): Promise<MainView | undefined> {
    const now = Date.now();
    if (this.tip && now - this.tipReadAt < TIP_FRESH_MS) return this.tip;
    this.tipReadAt = now;
    const read = findMain(this.repoDir);
    // A failed read is the callers' to report; the next one after a second tries again.
    read.catch(() => {});
    this.tip = read;
    return read;
  }
}
