import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import type { Env } from "../github/client.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { ActivitySources } from "./scope.js";

/**
 * When each pull request of the repository was last updated on GitHub, for freshness: a
 * learning linked to a PR (or to an `#N` that is one: issues and PRs share their numbers)
 * stays fresh while the PR moves. Read through the project's GitHub client, newest first
 * and only what changed since the last read, and cached in the state folder; when GitHub
 * is not configured, freshness follows git alone and says so.
 */

const CACHE_VERSION = 1;
/** Pages of 100 read per call: a first read of a large repository fills in over a few runs. */
const MAX_PAGES = 20;

interface Cache {
  version: number;
  repository: string;
  api_url: string;
  /** The newest `updated_at` seen: the next read stops there. */
  newest: string | null;
  /** PR number -> seconds of its `updated_at`. */
  pulls: Record<string, number>;
}

export interface GitHubActivity {
  /** PR number -> seconds of its last update. */
  updated: Map<number, number>;
  source: ActivitySources["github"];
}

const NOT_CONFIGURED: GitHubActivity = {
  updated: new Map(),
  source: {
    asked: false,
    reason:
      "GitHub is not configured (GITHUB_TOKEN and GITHUB_REPOSITORY or [github] repository): activity from git only",
  },
};

function cachePath(ctx: RepoContext): string {
  return join(ctx.paths.root, "graph", "github.json");
}

function readCache(ctx: RepoContext, repository: string, apiUrl: string): Cache {
  try {
    const cache = JSON.parse(readFileSync(cachePath(ctx), "utf8")) as Cache;
    if (
      cache.version === CACHE_VERSION &&
      cache.repository === repository &&
      cache.api_url === apiUrl
    )
      return cache;
  } catch {
    // No cache, or a damaged one: read from the start.
  }
  return { version: CACHE_VERSION, repository, api_url: apiUrl, newest: null, pulls: {} };
}

export async function githubActivity(ctx: RepoContext, env: Env): Promise<GitHubActivity> {
  // Without a token there is no GitHub to ask: the client (Octokit) is not even loaded.
  if (!env.GITHUB_TOKEN?.trim()) return NOT_CONFIGURED;
  const { createGitHub, githubSettings } = await import("../github/client.js");
  const settings = githubSettings(env, ctx.config);
  if (settings === null) return NOT_CONFIGURED;
  const repository = `${settings.owner}/${settings.repo}`;
  const cache = readCache(ctx, repository, settings.apiUrl);
  const known = Object.keys(cache.pulls).length;
  let failure: string | undefined;
  let read = 0;
  try {
    // One retry, quickly: freshness should not wait long on an unreachable GitHub.
    const gh = createGitHub(settings, { serverErrorRetries: 1, log: () => {} });
    let newest = cache.newest;
    let pages = 0;
    reading: for await (const page of gh.octokit.paginate.iterator(gh.octokit.rest.pulls.list, {
      owner: settings.owner,
      repo: settings.repo,
      state: "all",
      sort: "updated",
      direction: "desc",
      per_page: 100,
    })) {
      for (const pr of page.data) {
        // Newest first: from here on everything was read before.
        if (cache.newest !== null && pr.updated_at < cache.newest) break reading;
        cache.pulls[String(pr.number)] = Math.floor(Date.parse(pr.updated_at) / 1000);
        if (newest === null || pr.updated_at > newest) newest = pr.updated_at;
        read++;
      }
      if (++pages >= MAX_PAGES) break;
    }
    cache.newest = newest;
    mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
    writeFileAtomicSync(cachePath(ctx), JSON.stringify(cache));
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  const updated = new Map(Object.entries(cache.pulls).map(([n, at]) => [Number(n), at]));
  const reason =
    failure === undefined
      ? `pull requests of ${repository}: ${read} read now, ${updated.size} known; issues are not read yet`
      : `GitHub did not answer (${failure}): ${known} pull requests of ${repository} as cached`;
  return { updated, source: { asked: true, reason } };
}
