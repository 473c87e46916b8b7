import { readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../scripts/extract-github-openapi.js";
import { callCount } from "../../src/github/client.js";
import {
  BranchMovedError,
  GitHubApiError,
  GitHubPermissionError,
} from "../../src/github/errors.js";
import { commitThroughApi, upsertPullRequest } from "../../src/github/publish.js";
import { FIXTURE, GitHubOpenApi, toJsonSchema } from "../support/openapi.js";
import {
  BRANCH,
  client,
  commitFiles,
  fake,
  files,
  gh,
  owner,
  prRequest,
  repo,
  show,
  TOKEN,
  useClient,
} from "./github-fixtures.js";

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
    useClient(client("ghs_wrong"));
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
