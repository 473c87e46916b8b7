import { readFileSync } from "node:fs";
import Bottleneck from "bottleneck";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../scripts/extract-github-openapi.js";
import { UsageError } from "../../src/errors.js";
import { callCount, createGitHub, type GitHub, githubSettings } from "../../src/github/client.js";
import {
  BranchMovedError,
  GitHubApiError,
  GitHubPermissionError,
} from "../../src/github/errors.js";
import {
  closedUnmergedPulls,
  commitThroughApi,
  type PullRequestRequest,
  upsertPullRequest,
} from "../../src/github/publish.js";
import { defaultConfig } from "../../src/schema/config.js";
import { FakeGitHub } from "../support/fake-github.js";
import { FIXTURE, GitHubOpenApi, toJsonSchema } from "../support/openapi.js";
import { TempDirs } from "../support/repo.js";

const TOKEN = "ghs_faketoken0123456789";
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

let fake: FakeGitHub;
let gh: GitHub;
let logs: string[];

/** A client for the fake: rate-limit waits scaled to milliseconds, writes not spaced. */
function client(token = TOKEN): GitHub {
  const unspaced = () => new Bottleneck.Group({ maxConcurrent: 1, minTime: 0 });
  return createGitHub(
    { token, apiUrl: fake.url },
    {
      retryAfterBaseValue: 1,
      serverErrorBackoffBase: 1,
      write: unspaced(),
      notifications: unspaced(),
      log: (line) => logs.push(line),
    },
  );
}

beforeEach(async () => {
  fake = new FakeGitHub({ dir: dirs.dir("engram-fake-github-"), token: TOKEN });
  await fake.start();
  fake.seed({ "README.md": "hello\n", "memory/catalog.json": "{}\n" });
  logs = [];
  gh = client();
});

afterEach(async () => {
  await fake.stop();
  // Every request and response of the test conformed to GitHub's OpenAPI description.
  expect(fake.violations).toEqual([]);
});

const owner = "octo-org";
const repo = "memory-repo";
const BRANCH = "engram/memory";

/** `git show <rev>:<path>` in the fake's bare repository. */
function show(rev: string, path: string): string {
  return fake.git.git(["show", `${rev}:${path}`]);
}

function files(
  n: number,
  prefix = "memory/st/20260101-000000Z",
): { path: string; content: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    path: `${prefix}/engram_e_${String(i).padStart(4, "0")}.json`,
    content: `{"n":${i}}\n`,
  }));
}

async function commitFiles(n: number, expectedHeadSha: string | null = null) {
  return commitThroughApi(gh, {
    owner,
    repo,
    branch: BRANCH,
    parent: fake.branchSha("main")!,
    files: files(n),
    message: `memory: ${n} engrams`,
    expectedHeadSha,
  });
}

function prRequest(extra: Partial<PullRequestRequest> = {}): PullRequestRequest {
  return {
    owner,
    repo,
    head: BRANCH,
    base: "main",
    title: "memory: 2 engrams",
    body: "Proposed memory.",
    labels: ["memory"],
    reviewers: [],
    teamReviewers: [],
    draft: false,
    ...extra,
  };
}

describe("the OpenAPI fixture", () => {
  it("holds every operation engram uses, with its MIT note, and compiles", () => {
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8"));
    expect(doc["x-engram-source"].package).toBe("@octokit/openapi@23.0.2");
    expect(doc.info.license.name).toBe("MIT");
    const api = new GitHubOpenApi();
    expect(api.operations.map((op) => op.operationId).sort()).toEqual([...OPERATIONS].sort());
  });

  it("converts OpenAPI 3.0 nullable to JSON Schema", () => {
    expect(toJsonSchema({ type: "string", nullable: true })).toEqual({ type: ["string", "null"] });
    expect(toJsonSchema({ type: "string", enum: ["a"], nullable: true })).toEqual({
      type: ["string", "null"],
      enum: ["a", null],
    });
    expect(toJsonSchema({ allOf: [{ type: "object" }], nullable: true })).toEqual({
      anyOf: [{ allOf: [{ type: "object" }] }, { type: "null" }],
    });
  });

  it("catches a bad request body and a bad response body (the validator can fail)", async () => {
    const res = await fetch(`${fake.url}/repos/${owner}/${repo}/git/refs`, {
      method: "POST",
      headers: { authorization: `token ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ ref: 5, sha: "abc" }),
    });
    expect(res.status).toBe(422);
    expect(fake.violations).toHaveLength(1);
    expect(fake.violations[0]).toMatchObject({ operationId: "git/create-ref", where: "request" });
    expect(fake.violations[0]!.problems.join("\n")).toMatch(/\/ref must be string/);
    const api = new GitHubOpenApi();
    const get = api.operations.find((op) => op.operationId === "pulls/get")!;
    expect(api.checkResponse(get, 200, { number: "one" })).not.toEqual([]);
    expect(api.checkResponse(get, 201, {})).toEqual(["status 201 is not a documented response"]);
    fake.violations.length = 0;
  });

  it("answers every operation it serves in the documented shape", async () => {
    const rest = gh.octokit.rest;
    const repository = await rest.repos.get({ owner, repo });
    expect(repository.data).toMatchObject({
      full_name: `${owner}/${repo}`,
      default_branch: "main",
    });
    const blob = await rest.git.createBlob({ owner, repo, content: "aGk=", encoding: "base64" });
    expect(fake.git.git(["cat-file", "blob", blob.data.sha])).toBe("hi");
    const head = await rest.git.getCommit({ owner, repo, commit_sha: fake.branchSha("main")! });
    const tree = await rest.git.getTree({
      owner,
      repo,
      tree_sha: head.data.tree.sha,
      recursive: "1",
    });
    expect(tree.data.tree.map((e) => e.path)).toEqual(["README.md", "memory/catalog.json"]);
    await commitFiles(1);
    const { number } = await upsertPullRequest(gh, prRequest({ reviewers: ["alice"] }));
    const pr = await rest.pulls.get({ owner, repo, pull_number: number });
    expect(pr.data).toMatchObject({ mergeable: true, commits: 1, changed_files: 1, additions: 1 });
    expect(fake.violations).toEqual([]);
  });

  it("records a request no operation of the fixture describes", async () => {
    const res = await fetch(`${fake.url}/repos/${owner}/${repo}/contents/README.md`, {
      headers: { authorization: `token ${TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect(fake.violations.map((v) => v.where)).toEqual(["route"]);
    fake.violations.length = 0;
  });
});

describe("commitThroughApi", () => {
  it("commits 200 files with as many calls as 2 files", async () => {
    const small = await commitFiles(2);
    const smallCalls = fake.callCounts();
    expect(small.createdBranch).toBe(true);
    expect(smallCalls).toEqual({
      "git/get-ref": 1,
      "git/get-commit": 1,
      "git/create-tree": 1,
      "git/create-commit": 1,
      "git/create-ref": 1,
    });
    fake.resetCounts();
    const large = await commitFiles(200, small.sha);
    // The same five calls; the branch now exists, so it is moved rather than created.
    const { "git/create-ref": _, ...rest } = smallCalls;
    expect(fake.callCounts()).toEqual({ ...rest, "git/update-ref": 1 });
    expect(callCount(gh.usage)).toBe(10);
    // The branch holds the 200 files on top of main, as one commit whose parent is main.
    expect(fake.branchSha(BRANCH)).toBe(large.sha);
    expect(fake.git.git(["rev-parse", `${BRANCH}^`]).trim()).toBe(fake.branchSha("main"));
    expect(show(BRANCH, "memory/st/20260101-000000Z/engram_e_0199.json")).toBe('{"n":199}\n');
    expect(show(BRANCH, "README.md")).toBe("hello\n");
    const listed = fake.git.git(["ls-tree", "-r", "--name-only", BRANCH]).trim().split("\n");
    expect(listed).toHaveLength(202);
  });

  it("deletes files given with null content and writes nothing for no change", async () => {
    const main = fake.branchSha("main")!;
    const result = await commitThroughApi(gh, {
      owner,
      repo,
      branch: BRANCH,
      parent: main,
      files: [
        { path: "memory/catalog.json", content: null },
        { path: "MEMORY.md", content: "# Memory\n" },
      ],
      message: "memory: replace catalog",
      expectedHeadSha: null,
    });
    const names = fake.git.git(["ls-tree", "-r", "--name-only", result.sha!]).trim().split("\n");
    expect(names).toEqual(["MEMORY.md", "README.md"]);
    const same = await commitThroughApi(gh, {
      owner,
      repo,
      branch: BRANCH,
      parent: main,
      files: [{ path: "README.md", content: "hello\n" }],
      message: "no-op",
      expectedHeadSha: result.sha,
    });
    expect(same).toMatchObject({ sha: null, createdBranch: false });
    expect(fake.branchSha(BRANCH)).toBe(result.sha);
  });

  it("refuses when the branch is not where the caller expects (compare-and-swap)", async () => {
    const first = await commitFiles(2);
    fake.resetCounts();
    const stale = commitFiles(3, "f".repeat(40));
    await expect(stale).rejects.toBeInstanceOf(BranchMovedError);
    await expect(stale).rejects.toMatchObject({ exitCode: 3, actual: first.sha });
    // Nothing was written: only the branch was read.
    expect(fake.callCounts()).toEqual({ "git/get-ref": 1 });
    expect(fake.branchSha(BRANCH)).toBe(first.sha);
    // A branch expected to be new that exists is refused too.
    await expect(commitFiles(3, null)).rejects.toBeInstanceOf(BranchMovedError);
  });

  it("fast-forwards a branch created concurrently at its parent, refuses a diverged one", async () => {
    const main = fake.branchSha("main")!;
    fake.inject("git/create-ref", {
      kind: "concurrent",
      act: (f) => f.git.git(["update-ref", `refs/heads/${BRANCH}`, main]),
    });
    const ok = await commitFiles(2);
    expect(ok.createdBranch).toBe(false);
    expect(fake.branchSha(BRANCH)).toBe(ok.sha);
    expect(fake.calls("git/update-ref")).toBe(1);

    fake.git.git(["update-ref", "-d", `refs/heads/${BRANCH}`]);
    fake.inject("git/create-ref", {
      kind: "concurrent",
      act: (f) => f.seed({ "other.txt": "theirs\n" }, BRANCH, "another writer"),
    });
    const refused = commitFiles(2);
    await expect(refused).rejects.toBeInstanceOf(BranchMovedError);
    expect(show(BRANCH, "other.txt")).toBe("theirs\n");
  });

  it("reports other HTTP errors as one readable line", async () => {
    const missing = commitThroughApi(gh, {
      owner,
      repo,
      branch: BRANCH,
      parent: "0123456789abcdef0123456789abcdef01234567",
      files: files(1),
      message: "x",
      expectedHeadSha: null,
    });
    await expect(missing).rejects.toBeInstanceOf(GitHubApiError);
    const err = (await missing.catch((e: unknown) => e)) as GitHubApiError;
    expect(err.message).toBe(
      `GitHub (commit to ${BRANCH}): GET /repos/${owner}/${repo}/git/commits/0123456789abcdef0123456789abcdef01234567 failed: 404 Not Found`,
    );
    expect(err.message).not.toContain("\n");
    expect(err.status).toBe(404);
  });

  it("says so when GitHub cannot be reached, after the retries", async () => {
    await fake.stop();
    const err = (await commitFiles(1).catch((e: unknown) => e)) as GitHubApiError;
    expect(err).toBeInstanceOf(GitHubApiError);
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(
      /^GitHub \(commit to engram\/memory\): GET \/repos\/octo-org\/memory-repo\/git\/ref\/heads\/engram\/memory failed: no response: .*ECONNREFUSED/,
    );
    expect(gh.usage.requests).toBe(4);
  });

  it("says so when the token is refused", async () => {
    gh = client("ghs_wrong");
    const err = (await commitFiles(1).catch((e: unknown) => e)) as GitHubApiError;
    expect(err).toBeInstanceOf(GitHubApiError);
    expect(err.message).toMatch(
      /GET \/repos\/octo-org\/memory-repo\/git\/ref\/heads\/engram\/memory failed: 401 Bad credentials$/,
    );
    expect(err.message).not.toContain("ghs_wrong");
  });
});

describe("upsertPullRequest", () => {
  beforeEach(async () => {
    await commitFiles(2);
    fake.resetCounts();
  });

  it("creates the PR, then updates the same one", async () => {
    const created = await upsertPullRequest(gh, prRequest());
    expect(created).toMatchObject({ created: true, updated: false });
    expect(created.url).toBe(`${fake.url}/${owner}/${repo}/pull/${created.number}`);
    expect(fake.callCounts()).toEqual({
      "pulls/list": 1,
      "pulls/create": 1,
      "issues/add-labels": 1,
    });

    fake.resetCounts();
    const again = await upsertPullRequest(
      gh,
      prRequest({ title: "memory: 3 engrams", body: "More." }),
    );
    expect(again).toMatchObject({ number: created.number, created: false, updated: true });
    expect(fake.callCounts()).toEqual({ "pulls/list": 1, "pulls/update": 1 });
    expect(fake.pull(created.number)).toMatchObject({ title: "memory: 3 engrams", body: "More." });

    fake.resetCounts();
    const same = await upsertPullRequest(
      gh,
      prRequest({ title: "memory: 3 engrams", body: "More." }),
    );
    expect(same).toMatchObject({ number: created.number, created: false, updated: false });
    expect(fake.callCounts()).toEqual({ "pulls/list": 1 });
    expect(fake.allPulls()).toHaveLength(1);
  });

  it("converges when another writer opens the PR between list and create (422)", async () => {
    fake.inject("pulls/create", { kind: "already-exists" });
    const result = await upsertPullRequest(gh, prRequest());
    expect(result).toMatchObject({ created: false, updated: true });
    expect(fake.allPulls()).toHaveLength(1);
    expect(fake.pull(result.number)).toMatchObject({ title: "memory: 2 engrams", state: "open" });
    expect(fake.callCounts()).toEqual({
      "pulls/list": 2,
      "pulls/create": 1,
      "pulls/update": 1,
      "issues/add-labels": 1,
    });
  });

  it("applies labels (created with colour ededed) and requests reviewers once", async () => {
    const req = prRequest({
      labels: ["memory", "engram"],
      reviewers: ["alice", "bob"],
      teamReviewers: ["core"],
      draft: true,
    });
    const { number } = await upsertPullRequest(gh, req);
    expect(fake.pull(number)).toMatchObject({
      labels: ["memory", "engram"],
      reviewers: ["alice", "bob"],
      teams: ["core"],
      draft: true,
    });
    const pr = await gh.octokit.rest.pulls.get({ owner, repo, pull_number: number });
    expect(pr.data.labels.map((l) => [l.name, l.color])).toEqual([
      ["memory", "ededed"],
      ["engram", "ededed"],
    ]);
    fake.resetCounts();
    await upsertPullRequest(gh, { ...req, labels: ["memory", "engram", "lt"] });
    // Only the missing label; reviewers are not asked again.
    expect(fake.callCounts()).toEqual({ "pulls/list": 1, "issues/add-labels": 1 });
    expect(fake.pull(number)!.labels).toEqual(["memory", "engram", "lt"]);
  });

  it("explains the repository setting when Actions may not create PRs (exit 3)", async () => {
    fake.inject("pulls/create", { kind: "actions-not-permitted" });
    const err = (await upsertPullRequest(gh, prRequest()).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(GitHubPermissionError);
    expect((err as GitHubPermissionError).exitCode).toBe(3);
    expect(err.message).toContain("Allow GitHub Actions to create and approve pull requests");
    expect(err.message).toContain("Settings → Actions → General → Workflow permissions");
    expect(err.message).toContain("Organization settings");
    expect(err.message).toContain(`The branch ${BRANCH} was pushed anyway`);
    expect(fake.allPulls()).toEqual([]);
  });

  it("passes GitHub's validation message on when there is nothing to propose", async () => {
    fake.git.git(["update-ref", `refs/heads/${BRANCH}`, fake.branchSha("main")!]);
    const err = (await upsertPullRequest(gh, prRequest()).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(GitHubApiError);
    expect(err.message).toBe(
      `GitHub (pull request ${BRANCH} -> main): POST /repos/${owner}/${repo}/pulls failed: 422 Validation Failed: No commits between main and ${BRANCH}`,
    );
  });

  it("refuses a body over GitHub's limit before sending anything", async () => {
    const err = await upsertPullRequest(gh, prRequest({ body: "x".repeat(65_537) })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GitHubApiError);
    expect(fake.calls()).toBe(0);
  });
});

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

  it("lets [github] override the repository and the API URL (GitHub Enterprise, the fake)", () => {
    const custom = defaultConfig();
    custom.github.repository = "team/notes";
    custom.github.api_url = "https://ghe.example.com/api/v3/";
    const env = {
      GITHUB_TOKEN: "t",
      GITHUB_REPOSITORY: "o/r",
      GITHUB_API_URL: "http://127.0.0.1:1",
    };
    expect(githubSettings(env, custom)).toMatchObject({
      owner: "team",
      repo: "notes",
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
