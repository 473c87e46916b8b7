import { DIRECTOR_IDENTITY } from "../core/trust/engram-branch.js";
import type { GitHub } from "./client.js";
import {
  BranchMovedError,
  GitHubApiError,
  GitHubPermissionError,
  isAlreadyExists,
  isNotPermittedToCreatePullRequests,
  statusOf,
  wrapGitHubError,
} from "./errors.js";

/**
 * Publishing memory through the GitHub REST API: one commit of many files through the Git
 * Data API, and one pull request per head branch, created or updated. Each function costs
 * a constant number of calls, whatever the number of files.
 */

/** GitHub's limit on a PR body, in characters. */
export const MAX_PR_BODY_CHARS = 65_536;

export interface FileChange {
  /** Repository-relative path with `/` separators. */
  path: string;
  /** New UTF-8 content, or null to delete the file. */
  content: string | null;
}

export interface CommitRequest {
  owner: string;
  repo: string;
  /** Branch to move (without `refs/heads/`). */
  branch: string;
  /** The commit the new one builds on; its tree is the base of the changes. */
  parent: string;
  files: readonly FileChange[];
  message: string;
  /** The branch head this commit replaces, null when the branch must not exist yet. */
  expectedHeadSha: string | null;
}

export interface CommitResult {
  /** The new commit, or null when the files change nothing in `parent` (branch untouched). */
  sha: string | null;
  tree: string;
  /** Whether the branch was created (false: moved, or untouched). */
  createdBranch: boolean;
}

/**
 * Commits `files` on top of `parent` and points `branch` at the commit, if the branch still
 * is at `expectedHeadSha` (compare-and-swap; BranchMovedError otherwise). Five calls: read
 * the branch, read the parent, one tree with inline contents, the commit, the ref.
 */
export async function commitThroughApi(gh: GitHub, req: CommitRequest): Promise<CommitResult> {
  const { owner, repo, branch } = req;
  const git = gh.octokit.rest.git;
  try {
    const head = await branchHead(gh, owner, repo, branch);
    if (head !== req.expectedHeadSha) throw new BranchMovedError(branch, req.expectedHeadSha, head);
    const parent = await git.getCommit({ owner, repo, commit_sha: req.parent });
    const baseTree = parent.data.tree.sha;
    let tree = baseTree;
    if (req.files.length > 0) {
      const created = await git.createTree({
        owner,
        repo,
        base_tree: baseTree,
        tree: req.files.map((f) =>
          f.content === null
            ? { path: f.path, mode: "100644" as const, type: "blob" as const, sha: null }
            : { path: f.path, mode: "100644" as const, type: "blob" as const, content: f.content },
        ),
      });
      tree = created.data.sha;
    }
    if (tree === baseTree) {
      return { sha: null, tree, createdBranch: false };
    }
    const commit = await git.createCommit({
      owner,
      repo,
      message: req.message,
      tree,
      parents: [req.parent],
      // The Director's own identity: the guard and the next run tell its commits by it.
      author: { ...DIRECTOR_IDENTITY },
    });
    const sha = commit.data.sha;
    if (head !== null) {
      // The branch was read at `head` above; force, because a memory branch rebuilt on its
      // base is not a fast-forward of its previous head.
      await git.updateRef({ owner, repo, ref: `heads/${branch}`, sha, force: true });
      return { sha, tree, createdBranch: false };
    }
    try {
      await git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha });
      return { sha, tree, createdBranch: true };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    // Created meanwhile by someone else: move it only if that keeps their commits.
    try {
      await git.updateRef({ owner, repo, ref: `heads/${branch}`, sha, force: false });
      return { sha, tree, createdBranch: false };
    } catch (err) {
      if (statusOf(err) !== 422) throw err;
      throw new BranchMovedError(branch, null, await branchHead(gh, owner, repo, branch));
    }
  } catch (err) {
    throw wrapGitHubError(err, `commit to ${branch}`);
  }
}

/** The sha `branch` points at, or null when it does not exist. */
export async function branchHead(
  gh: GitHub,
  owner: string,
  repo: string,
  branch: string,
): Promise<string | null> {
  try {
    const ref = await gh.octokit.rest.git.getRef({ owner, repo, ref: `heads/${branch}` });
    return ref.data.object.sha;
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw err;
  }
}

export interface PullRequestRequest {
  owner: string;
  repo: string;
  /** Head branch (in `owner`'s repository, without `owner:`). */
  head: string;
  base: string;
  title: string;
  body: string;
  labels: readonly string[];
  reviewers: readonly string[];
  teamReviewers: readonly string[];
  draft: boolean;
}

export interface PullRequestResult {
  number: number;
  url: string;
  /** True when this call opened the PR. */
  created: boolean;
  /** True when an existing PR's title or body was changed. */
  updated: boolean;
}

interface OpenPull {
  number: number;
  html_url: string;
  title: string;
  body: string | null;
  labels: { name?: string }[];
}

/**
 * Opens the PR of `head` into `base`, or updates the open one: list open PRs by
 * `owner:head`, update (skipped when nothing changed) or create, treating a 422 "already
 * exists" as a concurrent writer's PR to update. Then adds the labels it lacks; reviewers
 * are asked when the PR is opened (asking again would re-request reviews already given).
 * At most five calls.
 */
export async function upsertPullRequest(
  gh: GitHub,
  req: PullRequestRequest,
): Promise<PullRequestResult> {
  if (req.body.length > MAX_PR_BODY_CHARS) {
    throw new GitHubApiError(
      `GitHub: the PR body is ${req.body.length} characters; GitHub accepts at most ${MAX_PR_BODY_CHARS}`,
      undefined,
      "POST",
      `/repos/${req.owner}/${req.repo}/pulls`,
      "body too long",
    );
  }
  const pulls = gh.octokit.rest.pulls;
  const { owner, repo } = req;
  try {
    let pr = await findOpenPull(gh, req);
    let created = false;
    if (pr === undefined) {
      try {
        const res = await pulls.create({
          owner,
          repo,
          head: req.head,
          base: req.base,
          title: req.title,
          body: req.body,
          draft: req.draft,
        });
        pr = res.data;
        created = true;
      } catch (err) {
        if (isNotPermittedToCreatePullRequests(err)) throw permissionError(req.head, err);
        if (!isAlreadyExists(err)) throw err;
        pr = await findOpenPull(gh, req);
        if (pr === undefined) throw err;
      }
    }
    let updated = false;
    if (!created && (pr.title !== req.title || (pr.body ?? "") !== req.body)) {
      const res = await pulls.update({
        owner,
        repo,
        pull_number: pr.number,
        title: req.title,
        body: req.body,
      });
      pr = res.data;
      updated = true;
    }
    const have = new Set(pr.labels.map((l) => (l.name ?? "").toLowerCase()));
    const missing = unique(req.labels).filter((l) => !have.has(l.toLowerCase()));
    if (missing.length > 0) {
      await gh.octokit.rest.issues.addLabels({
        owner,
        repo,
        issue_number: pr.number,
        labels: missing,
      });
    }
    if (created && (req.reviewers.length > 0 || req.teamReviewers.length > 0)) {
      await pulls.requestReviewers({
        owner,
        repo,
        pull_number: pr.number,
        reviewers: unique(req.reviewers),
        team_reviewers: unique(req.teamReviewers),
      });
    }
    return { number: pr.number, url: pr.html_url, created, updated };
  } catch (err) {
    throw wrapGitHubError(err, `pull request ${req.head} -> ${req.base}`);
  }
}

async function findOpenPull(gh: GitHub, req: PullRequestRequest): Promise<OpenPull | undefined> {
  const res = await gh.octokit.rest.pulls.list({
    owner: req.owner,
    repo: req.repo,
    state: "open",
    // pulls.list ignores a head filter without the `owner:` part.
    head: `${req.owner}:${req.head}`,
    base: req.base,
    per_page: 10,
  });
  return res.data[0];
}

function permissionError(head: string, cause: unknown): GitHubPermissionError {
  return new GitHubPermissionError(
    [
      `GitHub refused to open the pull request: "GitHub Actions is not permitted to create or approve pull requests".`,
      `The branch ${head} was pushed anyway; open the PR from it by hand, or let the workflow do it:`,
      `repository Settings → Actions → General → Workflow permissions → check "Allow GitHub Actions to create and approve pull requests"`,
      `(in an organization, first allow it under Organization settings → Actions → General → Workflow permissions),`,
      `or run with a GitHub App installation token or a personal access token instead of GITHUB_TOKEN.`,
    ].join("\n"),
    { cause },
  );
}

export interface ClosedPull {
  number: number;
  url: string;
  /** The head commit when the PR was closed. */
  headSha: string;
  closedAt: string | null;
  title: string;
}

/** The PRs of `head` in a state, oldest first, every page. */
function pullsOf(
  gh: GitHub,
  req: { owner: string; repo: string; head: string },
  state: "closed" | "all",
) {
  return gh.octokit.paginate(gh.octokit.rest.pulls.list, {
    owner: req.owner,
    repo: req.repo,
    state,
    head: `${req.owner}:${req.head}`,
    sort: "created",
    direction: "asc",
    per_page: 100,
  });
}

/**
 * PRs of `head` that were closed without being merged, oldest first: their engrams were
 * rejected. Paginated, one call per 100 PRs.
 */
export async function closedUnmergedPulls(
  gh: GitHub,
  req: { owner: string; repo: string; head: string },
): Promise<ClosedPull[]> {
  try {
    const all = await pullsOf(gh, req, "closed");
    return all
      .filter((p) => p.merged_at === null)
      .map((p) => ({
        number: p.number,
        url: p.html_url,
        headSha: p.head.sha,
        closedAt: p.closed_at,
        title: p.title,
      }));
  } catch (err) {
    throw wrapGitHubError(err, `closed pull requests of ${req.head}`);
  }
}

export interface HeadPull {
  number: number;
  url: string;
  state: "open" | "closed";
  /** When it merged (null: open, or closed unmerged). */
  mergedAt: string | null;
  /** When it was closed, merged or not (null: open). */
  closedAt: string | null;
  headSha: string;
}

/**
 * Every PR of `head`, open and closed, oldest first: where each proposal stands (proposed,
 * confirmed by a merge, rejected by a close). Paginated, one call per 100 PRs.
 */
export async function pullsOfHead(
  gh: GitHub,
  req: { owner: string; repo: string; head: string },
): Promise<HeadPull[]> {
  try {
    const all = await pullsOf(gh, req, "all");
    return all.map((p) => ({
      number: p.number,
      url: p.html_url,
      state: p.state === "open" ? ("open" as const) : ("closed" as const),
      mergedAt: p.merged_at,
      closedAt: p.closed_at,
      headSha: p.head.sha,
    }));
  } catch (err) {
    throw wrapGitHubError(err, `pull requests of ${req.head}`);
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
