import type { RepoContext } from "../context/repo-context.js";
import type { ProposalPlan } from "../core/proposal/plan.js";
import type { Proposal } from "../core/rendering/pr-body.js";
import type { EventBuffer } from "../state/buffer.js";
import type { RunOptions } from "./run.js";
import type { WorkTreeMemory } from "./work-tree-memory.js";

/** The pull-request side of a proposal (GitHub, or the local test server). */
export interface PullRequestPort {
  /** Pull requests of the head branch closed without merging, with the commit each proposed. */
  closedUnmerged(head: string): Promise<{ number: number; head_sha: string }[]>;
  upsert(pr: {
    head: string;
    base: string;
    title: string;
    body: string;
  }): Promise<{ number: number; url: string; created: boolean }>;
}

/** Commits files on a branch through an API instead of a git push (compare-and-swap on the branch). */
export type ApiCommitter = (req: {
  branch: string;
  parent: string;
  files: { path: string; content: string | null }[];
  message: string;
  expected: string | null;
}) => Promise<{ moved: boolean; sha: string | null }>;

export interface ProposeOptions extends RunOptions {
  /** The remote to push to (default origin); without it the branch is only committed locally. */
  remote: string;
  /** The branch memory is proposed against. */
  base: string;
  /** The machine-owned branch holding the proposal. */
  branch: string;
  pulls?: PullRequestPort | null;
  /** A link to a file on the head branch, for the pull request body. */
  fileUrl?: (path: string) => string;
  /** Where the run's dashboard is uploaded, linked from the pull request body. */
  dashboardUrl?: string;
  /**
   * The Git Data API route for the commit: used instead of `git push` when `preferApi`, and
   * as the fallback when the push is refused for any reason but a lost race.
   */
  apiCommit?: ApiCommitter;
  preferApi?: boolean;
  /**
   * A version step made in the staging tree before the cycle (a rollback): proposed with
   * the cycle's result like any other change. Called once, under the Director lock.
   */
  beforeCycle?: (staging: RepoContext, buffer: EventBuffer) => Promise<void>;
}

export type ProposalStatus =
  | "created"
  | "updated"
  | "regenerated"
  | "unchanged"
  | "nothing-to-propose"
  | "dry-run";

export interface ProposalResult {
  status: ProposalStatus;
  branch: string;
  base: string;
  remote: string | null;
  main_sha: string;
  /** The engram branch after this run (null when there is none). */
  head_sha: string | null;
  previous_head_sha: string | null;
  pushed: boolean;
  /** How the branch got there: a git push, the Git Data API, or only a local commit. */
  via: "git" | "api" | "local" | null;
  /** Push attempts: more than one when another Director moved the branch first. */
  attempts: number;
  /** Engrams of the previous proposal carried onto a newer main. */
  carried: number;
  /** Engrams not proposed again because a pull request proposing them was closed unmerged. */
  rejected: number;
  pr: { number: number; url: string; created: boolean } | null;
  /** With no GitHub configured: the pull request that would have been opened. */
  would_open: { title: string; body: string } | null;
  /** What the pull request proposes against main (null when there is no branch). */
  review: Proposal | null;
  /** With `--dry-run`: what the run would do, nothing of it done (null otherwise). */
  plan: ProposalPlan | null;
  /** Memory a cycle wrote into the work tree that its HEAD lacks (null: none). */
  work_tree: WorkTreeMemory | null;
}
