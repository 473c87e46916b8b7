import type { GitHub, GitHubSettings } from "../github/client.js";
import { BranchMovedError } from "../github/errors.js";
import { closedUnmergedPulls, commitThroughApi, upsertPullRequest } from "../github/publish.js";
import type { ApiCommitter, PullRequestPort } from "./propose-types.js";

/** The pull requests of a proposal on GitHub (or any server speaking its REST API). */
export function githubPulls(gh: GitHub, settings: GitHubSettings): PullRequestPort {
  const repo = { owner: settings.owner, repo: settings.repo };
  return {
    async closedUnmerged(head) {
      const pulls = await closedUnmergedPulls(gh, { ...repo, head });
      return pulls.map((p) => ({ number: p.number, head_sha: p.headSha }));
    },
    async upsert(pr) {
      const r = await upsertPullRequest(gh, {
        ...repo,
        ...pr,
        labels: settings.labels,
        reviewers: settings.reviewers,
        teamReviewers: settings.teamReviewers,
        draft: settings.draft,
      });
      return { number: r.number, url: r.url, created: r.created };
    },
  };
}

/**
 * Commits through the Git Data API (one tree with inline contents, whatever the number of
 * files), for a runner whose git may fetch but not push. A lost compare-and-swap is an
 * outcome, as with a lost push lease.
 */
export function githubCommitter(gh: GitHub, settings: GitHubSettings): ApiCommitter {
  return async (req) => {
    try {
      const r = await commitThroughApi(gh, {
        owner: settings.owner,
        repo: settings.repo,
        branch: req.branch,
        parent: req.parent,
        files: req.files,
        message: req.message,
        expectedHeadSha: req.expected,
      });
      return { moved: false, sha: r.sha };
    } catch (error) {
      if (error instanceof BranchMovedError) return { moved: true, sha: null };
      throw error;
    }
  };
}

/** A link to a file on the head branch, for the pull request body. */
export function githubFileUrl(settings: GitHubSettings, branch: string): (path: string) => string {
  const web =
    settings.apiUrl === "https://api.github.com"
      ? "https://github.com"
      : settings.apiUrl.replace(/\/api\/v3$/, "");
  return (path) =>
    `${web}/${settings.owner}/${settings.repo}/blob/${branch.split("/").map(encodeURIComponent).join("/")}/${path}`;
}
