/** The GitHub adapter against the fake: rate limits and retries, merging and closing, the settings. */
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { callCount, githubSettings } from "../../src/github/client.js";
import { GitHubApiError } from "../../src/github/errors.js";
import {
  closedUnmergedPulls,
  commitThroughApi,
  upsertPullRequest,
} from "../../src/github/publish.js";
import { defaultConfig } from "../../src/schema/config.js";
import {
  BRANCH,
  commitFiles,
  fake,
  gh,
  logs,
  owner,
  prRequest,
  repo,
  show,
} from "./github-fixtures.js";

describe("rate limits and retries", () => {
  it("retries a secondary rate limit after retry-after", async () => {
    fake.inject("git/create-tree", { kind: "secondary-rate-limit", retryAfter: 7 });
    const result = await commitFiles(2);
    expect(fake.branchSha(BRANCH)).toBe(result.sha);
    expect(fake.calls("git/create-tree")).toBe(2);
    expect(gh.usage.rateLimited).toBe(1);
    expect(gh.usage.requests).toBe(6);
    expect(callCount(gh.usage)).toBe(5);
    expect(logs.join("\n")).toMatch(
      /^github: secondary rate limit on POST \/repos\/\{owner\}\/\{repo\}\/git\/trees; retry 1 in 7s$/m,
    );
  });

  it("waits for the reset of a primary rate limit (403 and 429)", async () => {
    fake.inject(
      "pulls/list",
      { kind: "primary-rate-limit", status: 403, resetInSeconds: 5 },
      { kind: "primary-rate-limit", status: 429, resetInSeconds: 5 },
    );
    await commitFiles(1);
    const result = await upsertPullRequest(gh, prRequest());
    expect(result.created).toBe(true);
    expect(fake.calls("pulls/list")).toBe(3);
    expect(gh.usage.rateLimited).toBe(2);
    expect(logs.filter((l) => l.includes("primary rate limit"))).toHaveLength(2);
  });

  it("gives up after a bounded number of rate-limit retries, with a readable error", async () => {
    const limit = { kind: "secondary-rate-limit", retryAfter: 1 } as const;
    fake.inject("git/create-commit", limit, limit, limit, limit, limit);
    const err = (await commitFiles(1).catch((e: unknown) => e)) as GitHubApiError;
    expect(err).toBeInstanceOf(GitHubApiError);
    expect(err.status).toBe(403);
    expect(err.message).toMatch(
      /^GitHub \(commit to engram\/memory\): POST \/repos\/octo-org\/memory-repo\/git\/commits failed: 403 You have exceeded a secondary rate limit/,
    );
    expect(err.message).not.toContain("\n");
    expect(fake.calls("git/create-commit")).toBe(4);
    expect(logs.at(-1)).toMatch(/giving up after 3 retries/);
    expect(fake.branchSha(BRANCH)).toBeNull();
  });

  it("retries 5xx answers", async () => {
    fake.inject(
      "git/create-commit",
      { kind: "server-error", status: 502 },
      { kind: "server-error", status: 500 },
    );
    fake.inject("pulls/create", { kind: "server-error", status: 503 });
    await commitFiles(2);
    expect(fake.calls("git/create-commit")).toBe(3);
    const pr = await upsertPullRequest(gh, prRequest());
    expect(pr.created).toBe(true);
    expect(fake.calls("pulls/create")).toBe(2);
    expect(fake.allPulls()).toHaveLength(1);
  });
});

describe("merging and closing through the fake", () => {
  it("merges with a real merge commit that moves main in the bare repository", async () => {
    const before = fake.branchSha("main")!;
    const commit = await commitFiles(3);
    const { number } = await upsertPullRequest(gh, prRequest());
    const merged = await gh.octokit.rest.pulls.merge({
      owner,
      repo,
      pull_number: number,
      sha: commit.sha!,
    });
    expect(merged.data.merged).toBe(true);
    const main = fake.git.git(["rev-parse", "main"]).trim();
    expect(main).toBe(merged.data.sha);
    expect(fake.git.git(["rev-list", "--parents", "-n", "1", "main"]).trim()).toBe(
      `${main} ${before} ${commit.sha}`,
    );
    expect(show("main", "memory/st/20260101-000000Z/engram_e_0002.json")).toBe('{"n":2}\n');
    expect(fake.pull(number)).toMatchObject({ state: "closed", merged: true });
    expect(await closedUnmergedPulls(gh, { owner, repo, head: BRANCH })).toEqual([]);
  });

  it("fast-forwards with the rebase method", async () => {
    const commit = await commitFiles(1);
    const { number } = await upsertPullRequest(gh, prRequest());
    await gh.octokit.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "rebase" });
    expect(fake.branchSha("main")).toBe(commit.sha);
  });

  it("lists PRs closed without merging, with their head sha", async () => {
    const first = await commitFiles(2);
    const one = await upsertPullRequest(gh, prRequest());
    await gh.octokit.rest.pulls.update({ owner, repo, pull_number: one.number, state: "closed" });
    const second = await commitFiles(3, first.sha);
    const two = await upsertPullRequest(gh, prRequest());
    expect(two.number).not.toBe(one.number);
    await gh.octokit.rest.pulls.merge({ owner, repo, pull_number: two.number });
    const third = await commitThroughApi(gh, {
      owner,
      repo,
      branch: BRANCH,
      parent: fake.branchSha("main")!,
      files: [{ path: "MEMORY.md", content: "# Memory\n" }],
      message: "memory: focus",
      expectedHeadSha: second.sha,
    });
    const open = await upsertPullRequest(gh, prRequest());
    const closed = await closedUnmergedPulls(gh, { owner, repo, head: BRANCH });
    expect(closed).toEqual([
      {
        number: one.number,
        url: `${fake.url}/${owner}/${repo}/pull/${one.number}`,
        headSha: first.sha,
        closedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        title: "memory: 2 engrams",
      },
    ]);
    expect(fake.pull(open.number)).toMatchObject({ state: "open", headSha: third.sha });
  });

  it("closes an open PR whose head is reset to its base, as GitHub does", async () => {
    await commitFiles(1);
    const { number } = await upsertPullRequest(gh, prRequest());
    const main = fake.branchSha("main")!;
    await gh.octokit.rest.git.updateRef({
      owner,
      repo,
      ref: `heads/${BRANCH}`,
      sha: main,
      force: true,
    });
    expect(fake.pull(number)).toMatchObject({ state: "closed", merged: false });
  });

  it("rejects a non-fast-forward ref update without force (422)", async () => {
    const first = await commitFiles(1);
    fake.seed({ "x.txt": "x\n" }, "main", "main moves on");
    const err = await gh.octokit.rest.git
      .updateRef({
        owner,
        repo,
        ref: `heads/${BRANCH}`,
        sha: fake.branchSha("main")!,
        force: false,
      })
      .catch((e: { status: number; message: string }) => e);
    expect(err).toMatchObject({ status: 422 });
    expect(fake.branchSha(BRANCH)).toBe(first.sha);
  });
});

describe("githubSettings", () => {
  const config = defaultConfig();

  it("is null without a token or a repository: the Director works without GitHub", () => {
    expect(githubSettings({}, config)).toBeNull();
    expect(githubSettings({ GITHUB_TOKEN: "t" }, config)).toBeNull();
    expect(githubSettings({ GITHUB_REPOSITORY: "o/r" }, config)).toBeNull();
    expect(githubSettings({ GITHUB_TOKEN: " ", GITHUB_REPOSITORY: "o/r" }, config)).toBeNull();
  });

  it("reads the Actions environment, with the defaults of [github]", () => {
    expect(
      githubSettings({ GITHUB_TOKEN: "t", GITHUB_REPOSITORY: "octo-org/app" }, config),
    ).toEqual({
      token: "t",
      owner: "octo-org",
      repo: "app",
      apiUrl: "https://api.github.com",
      baseBranch: "main",
      headBranch: "engram/memory",
      labels: ["memory"],
      reviewers: [],
      teamReviewers: [],
      draft: false,
      useGitDataApi: false,
    });
  });

  it("takes [github] repository and api_url only where the environment leaves them out or allows them", () => {
    const custom = defaultConfig();
    custom.github.repository = "team/notes";
    custom.github.api_url = "https://ghe.example.com/api/v3/";
    const env = {
      GITHUB_TOKEN: "t",
      GITHUB_REPOSITORY: "o/r",
      GITHUB_API_URL: "http://127.0.0.1:1",
    };
    // The environment names where the token goes and for which repository: it wins.
    expect(githubSettings(env, custom)).toMatchObject({
      owner: "o",
      repo: "r",
      apiUrl: "http://127.0.0.1:1",
    });
    // Without it, the config's API host only when the environment allows that host.
    const bare = { GITHUB_TOKEN: "t" };
    expect(() => githubSettings(bare, custom)).toThrow(
      /\[github\] api_url: names ghe\.example\.com, a host the environment does not allow.*ENGRAM_ALLOW_HOSTS/,
    );
    expect(
      githubSettings({ ...bare, ENGRAM_ALLOW_HOSTS: "ghe.example.com" }, custom),
    ).toMatchObject({ owner: "team", repo: "notes", apiUrl: "https://ghe.example.com/api/v3" });
    // The user's own config file (outside the repository) is the user's choice.
    expect(githubSettings(bare, custom, true)).toMatchObject({
      apiUrl: "https://ghe.example.com/api/v3",
    });
    expect(githubSettings(env, config)).toMatchObject({ apiUrl: "http://127.0.0.1:1" });
  });

  it("names the variable when it is malformed", () => {
    expect(() =>
      githubSettings({ GITHUB_TOKEN: "t", GITHUB_REPOSITORY: "just-a-name" }, config),
    ).toThrow(UsageError);
    expect(() =>
      githubSettings(
        { GITHUB_TOKEN: "t", GITHUB_REPOSITORY: "o/r", GITHUB_API_URL: "ftp://x" },
        config,
      ),
    ).toThrow(/GITHUB_API_URL/);
  });
});
