import { retry } from "@octokit/plugin-retry";
import { type ThrottlingOptions, throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { githubAccess } from "../core/trust/destinations.js";
import { UsageError } from "../errors.js";
import type { Config } from "../schema/config.js";
import { checkHeadBranch } from "./head-branch.js";

/**
 * The GitHub REST client: `@octokit/rest` with the throttling plugin (GitHub's primary and
 * secondary rate limits, writes spaced as GitHub asks) and the retry plugin (5xx and network
 * errors), counting what it sends. Settings come from the environment GitHub Actions sets
 * (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL); `[github]` fills in only what the
 * environment leaves out, and names an API host only when the environment allows it
 * (src/core/trust/destinations.ts).
 */

export const DEFAULT_API_URL = "https://api.github.com";

export interface GitHubSettings {
  /** A PAT, a GitHub App installation token or the workflow's GITHUB_TOKEN. Never logged. */
  token: string;
  owner: string;
  repo: string;
  /** REST base URL without a trailing slash. */
  apiUrl: string;
  baseBranch: string;
  headBranch: string;
  labels: string[];
  reviewers: string[];
  teamReviewers: string[];
  draft: boolean;
  useGitDataApi: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

const REPOSITORY = /^([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)$/;

/**
 * The GitHub settings, or null when there is no token or no repository: the Director then
 * works without GitHub. A malformed GITHUB_REPOSITORY or GITHUB_API_URL is a UsageError
 * (the config's own values are validated by its schema); an API host the repository's
 * config names without the environment's leave, or a head branch engram does not own, is a
 * ConfigError. `userConfig`: the config is the user's own file, outside the repository.
 */
export function githubSettings(
  env: Env,
  config: Pick<Config, "github">,
  userConfig = false,
): GitHubSettings | null {
  const section = config.github;
  const token = env.GITHUB_TOKEN?.trim() ?? "";
  // The environment names the repository the token is for; the config only when it does not.
  const repository = nonEmpty(env.GITHUB_REPOSITORY) ?? section.repository;
  if (token === "" || repository === undefined) return null;
  const match = REPOSITORY.exec(repository);
  if (!match) {
    throw new UsageError(
      `GITHUB_REPOSITORY: expected OWNER/NAME, got ${JSON.stringify(repository)} (or set [github] repository)`,
    );
  }
  const apiUrl = githubAccess(section, { env, userConfig, file: "config/dev.toml" }).url;
  return {
    token,
    owner: match[1]!,
    repo: match[2]!,
    apiUrl: apiUrl.replace(/\/+$/, ""),
    baseBranch: section.base_branch,
    headBranch: checkHeadBranch(section.head_branch, section.base_branch),
    labels: [...section.labels],
    reviewers: [...section.reviewers],
    teamReviewers: [...section.team_reviewers],
    draft: section.draft,
    useGitDataApi: section.use_git_data_api,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v === undefined || v === "" ? undefined : v;
}

/** What the client sent: logical calls (one per Octokit method call) and HTTP requests. */
export interface ApiUsage {
  /** Octokit calls, by route (`POST /repos/{owner}/{repo}/git/trees`). */
  readonly calls: Map<string, number>;
  /** HTTP requests, retries included: what GitHub's rate limits count. */
  requests: number;
  /** Requests retried after a rate limit. */
  rateLimited: number;
}

/** Knobs for tests and the bench; production uses the plugins' defaults. */
export interface GitHubTuning {
  /** Milliseconds per second of `retry-after` / rate-limit reset (default 1000; tests: 1). */
  retryAfterBaseValue?: number;
  /** Seconds to wait after a secondary limit without `retry-after` (default 60). */
  fallbackSecondaryRateRetryAfter?: number;
  /** Retries after a rate limit, per request (default 3). */
  rateLimitRetries?: number;
  /** Retries after a 5xx or network error, per request (default 3). */
  serverErrorRetries?: number;
  /** Milliseconds per unit of the retry plugin's (n+1)² backoff (default 1000; tests: 1). */
  serverErrorBackoffBase?: number;
  /**
   * Bottleneck groups spacing writes (default: the plugin's, one write per second and one
   * PR/review request per 3 s, as GitHub's best practices ask). Tests pass unspaced groups.
   */
  write?: ThrottlingOptions["write"];
  notifications?: ThrottlingOptions["notifications"];
  /** Where retry notes go (default: stderr). */
  log?: (line: string) => void;
  /** HTTP implementation (default: global fetch). */
  fetch?: typeof fetch;
}

const EngramOctokit = Octokit.plugin(throttling, retry);
export type GitHubOctokit = InstanceType<typeof EngramOctokit>;

export interface GitHub {
  readonly octokit: GitHubOctokit;
  readonly usage: ApiUsage;
}

/** An Octokit for `settings`, with rate-limit handling, retries and counting. */
export function createGitHub(
  settings: Pick<GitHubSettings, "token" | "apiUrl">,
  tuning: GitHubTuning = {},
): GitHub {
  const log = tuning.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const rateLimitRetries = tuning.rateLimitRetries ?? 3;
  const usage: ApiUsage = { calls: new Map(), requests: 0, rateLimited: 0 };
  const baseFetch = tuning.fetch ?? globalThis.fetch;
  const onLimit =
    (kind: string) =>
    (retryAfter: number, options: { method: string; url: string }, _o: unknown, count: number) => {
      const what = `${options.method} ${options.url}`;
      if (count >= rateLimitRetries) {
        log(`github: ${kind} rate limit on ${what}; giving up after ${count} retries`);
        return false;
      }
      usage.rateLimited++;
      log(`github: ${kind} rate limit on ${what}; retry ${count + 1} in ${retryAfter}s`);
      return true;
    };
  const octokit = new EngramOctokit({
    auth: settings.token,
    baseUrl: settings.apiUrl,
    userAgent: "engram",
    // Octokit's own logger would print warnings with whole responses; retries are logged above.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    request: {
      fetch: (input: string | URL | Request, init?: RequestInit) => {
        usage.requests++;
        return baseFetch(input, init);
      },
    },
    throttle: {
      onRateLimit: onLimit("primary"),
      onSecondaryRateLimit: onLimit("secondary"),
      ...(tuning.retryAfterBaseValue !== undefined && {
        retryAfterBaseValue: tuning.retryAfterBaseValue,
      }),
      ...(tuning.fallbackSecondaryRateRetryAfter !== undefined && {
        fallbackSecondaryRateRetryAfter: tuning.fallbackSecondaryRateRetryAfter,
      }),
      ...(tuning.write !== undefined && { write: tuning.write }),
      ...(tuning.notifications !== undefined && { notifications: tuning.notifications }),
    },
    retry: {
      retries: tuning.serverErrorRetries ?? 3,
      ...(tuning.serverErrorBackoffBase !== undefined && {
        retryAfterBaseValue: tuning.serverErrorBackoffBase,
      }),
    },
  });
  // Registered after the plugins, so it wraps them: one count per call, whatever the retries.
  octokit.hook.before("request", (options) => {
    const route = `${options.method} ${String(options.url)}`;
    usage.calls.set(route, (usage.calls.get(route) ?? 0) + 1);
  });
  return { octokit, usage };
}

/** Logical calls made so far, all routes together. */
export function callCount(usage: ApiUsage): number {
  let n = 0;
  for (const count of usage.calls.values()) n += count;
  return n;
}
