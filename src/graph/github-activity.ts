import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { ConfigError } from "../errors.js";
import type { Env } from "../github/client.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { ActivitySources } from "./scope.js";

/**
 * When each issue and pull request of the repository was last updated on GitHub, for
 * freshness: a learning linked to an issue or a PR (`#N`, `PR #N`: the two share one
 * numbering) stays fresh while it moves. Read through the project's GitHub client from the
 * repository's issues listing, which holds pull requests too (as issues with a
 * `pull_request` key): newest-updated first, only what changed since the last read
 * (`since`), and cached in the state folder; when GitHub is not configured, freshness
 * follows git alone and says so.
 */

const CACHE_VERSION = 2;
/**
 * Pages of 100 read per call. A first read of a very large repository takes the 2,000
 * most recently updated; older issues have not moved since and count as no activity.
 */
const MAX_PAGES = 20;

/** What moved on GitHub: an issue or a pull request, and when (seconds). */
export interface GitHubUpdate {
  at: number;
  kind: "issue" | "pr";
}

interface Cache {
  version: number;
  repository: string;
  api_url: string;
  /** The newest `updated_at` seen: the next read asks from there (`since`). */
  newest: string | null;
  /** Number -> [seconds of its `updated_at`, 1 for a pull request, 0 for an issue]. */
  items: Record<string, [number, 0 | 1]>;
}

export interface GitHubActivity {
  /** Issue or PR number -> its last update. */
  updated: Map<number, GitHubUpdate>;
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
  return { version: CACHE_VERSION, repository, api_url: apiUrl, newest: null, items: {} };
}

function counted(updated: ReadonlyMap<number, GitHubUpdate>): string {
  let pulls = 0;
  for (const u of updated.values()) if (u.kind === "pr") pulls++;
  return `${updated.size - pulls} issues and ${pulls} pull requests`;
}

export async function githubActivity(ctx: RepoContext, env: Env): Promise<GitHubActivity> {
  // Without a token there is no GitHub to ask: the client (Octokit) is not even loaded.
  if (!env.GITHUB_TOKEN?.trim()) return NOT_CONFIGURED;
  const { createGitHub, githubSettings } = await import("../github/client.js");
  let settings: ReturnType<typeof githubSettings>;
  try {
    settings = githubSettings(env, ctx.config, trustOf(ctx, env).userConfig);
  } catch (error) {
    // An API host the environment does not allow: not asked, and the reason says what to set.
    if (!(error instanceof ConfigError)) throw error;
    return { updated: new Map(), source: { asked: false, reason: error.message } };
  }
  if (settings === null) return NOT_CONFIGURED;
  const repository = `${settings.owner}/${settings.repo}`;
  const cache = readCache(ctx, repository, settings.apiUrl);
  let failure: string | undefined;
  let read = 0;
  try {
    // One retry, quickly: freshness should not wait long on an unreachable GitHub.
    const gh = createGitHub(settings, { serverErrorRetries: 1, log: () => {} });
    let newest = cache.newest;
    let pages = 0;
    reading: for await (const page of gh.octokit.paginate.iterator(
      gh.octokit.rest.issues.listForRepo,
      {
        owner: settings.owner,
        repo: settings.repo,
        state: "all",
        sort: "updated",
        direction: "desc",
        per_page: 100,
        ...(cache.newest !== null ? { since: cache.newest } : {}),
      },
    )) {
      for (const item of page.data) {
        // Newest first: from here on everything was read before.
        if (cache.newest !== null && item.updated_at < cache.newest) break reading;
        const at = Math.floor(Date.parse(item.updated_at) / 1000);
        cache.items[String(item.number)] = [at, item.pull_request ? 1 : 0];
        if (newest === null || item.updated_at > newest) newest = item.updated_at;
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
  const updated = new Map<number, GitHubUpdate>(
    Object.entries(cache.items).map(([n, [at, pr]]) => [
      Number(n),
      { at, kind: pr === 1 ? "pr" : "issue" },
    ]),
  );
  const reason =
    failure === undefined
      ? `issues and pull requests of ${repository}: ${read} read now, ${counted(updated)} known`
      : `GitHub did not answer (${failure}): ${counted(updated)} of ${repository} as cached`;
  return { updated, source: { asked: true, reason } };
}
