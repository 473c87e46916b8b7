import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { upsertPullRequest } from "../../src/github/publish.js";
import { learningFreshness } from "../../src/graph/queries.js";
import {
  commitFiles,
  dirs,
  fake,
  gh,
  owner,
  prRequest,
  repo,
  TOKEN,
} from "../github/github-fixtures.js";
import { assertBuilt, director, worker } from "../support/bins.js";
import type { TempRepo } from "../support/repo.js";

const TWO_YEARS_AGO = "2024-11-20T10:00:00Z";
let memory: TempRepo;

beforeAll(async () => {
  assertBuilt();
  memory = dirs.repo();
  memory.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  expect((await director(["init", "--repo", memory.dir], { cwd: memory.dir })).code).toBe(0);
  // One engram each (a learning carries the entities of the engrams stating it).
  const notes = ["Retries back off as PR #1 set up", "Uploads stall on large files, see #2"];
  for (const [i, text] of notes.entries()) {
    const env = { SOURCE_DATE_EPOCH: String(Date.parse(TWO_YEARS_AGO) / 1000 + i * 60) };
    const emit = await worker(["emit", "--repo", memory.dir, "--kind", "fact", "--text", text], {
      cwd: memory.dir,
      env,
    });
    expect(emit.code, emit.stderr).toBe(0);
    const run = await director(["run", "--force", "--repo", memory.dir], { cwd: memory.dir, env });
    expect(run.code, run.stderr).toBe(0);
  }
  // The memory reached main two years ago: author and committer dates both.
  const dated = {
    ...process.env,
    GIT_AUTHOR_DATE: TWO_YEARS_AGO,
    GIT_COMMITTER_DATE: TWO_YEARS_AGO,
  };
  const commit = (args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: memory.dir,
      env: dated,
      stdio: "ignore",
    });
  commit(["add", "-A"]);
  commit(["commit", "-q", "-m", "memory"]);
});

/**
 * Freshness a day from now: the learnings are two years old, the pull request and the issue
 * they link to move today.
 */
async function freshness(env: Record<string, string>) {
  const ctx = await openContext({ repo: memory.dir });
  const now = Math.floor(Date.now() / 1000) + 86_400;
  const r = await learningFreshness(ctx, { thresholdDays: 30, now, env });
  const l = r.learnings.find((x) => x.text.includes("PR #1"));
  const issue = r.learnings.find((x) => x.text.includes("see #2"));
  return { r, l, issue };
}

describe("freshness with GitHub", () => {
  it("follows linked issues' and pull requests' updated_at, caches them, and says which sources it read", async () => {
    await commitFiles(1);
    await upsertPullRequest(gh, prRequest());
    // Issues and pull requests share one numbering: the pull request is #1, this issue #2.
    const created = await gh.octokit.rest.issues.create({
      owner,
      repo,
      title: "Uploads stall on large files",
    });
    expect(created.data.number).toBe(2);
    const env = {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${owner}/${repo}`,
      GITHUB_API_URL: fake.url,
    };

    const listed = fake.calls("issues/list-for-repo");
    const pullsListed = fake.calls("pulls/list");
    const withGitHub = await freshness(env);
    expect(withGitHub.l?.temporal_fresh).toBe(false);
    expect(withGitHub.l?.fresh).toBe(true);
    expect(withGitHub.l?.graph_activity?.entity).toBe("pr:1");
    expect(withGitHub.l?.why).toMatch(
      /pr:1 last moved 1 days ago \(pull request #1 updated at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/,
    );
    // A learning linked to an issue follows the issue, and says so.
    expect(withGitHub.issue?.temporal_fresh).toBe(false);
    expect(withGitHub.issue?.fresh).toBe(true);
    expect(withGitHub.issue?.graph_activity?.entity).toBe("issue:2");
    expect(withGitHub.issue?.why).toContain(
      `issue:2 last moved 1 days ago (issue #2 updated at ${created.data.updated_at.replace(/\.\d+Z$/, "Z")})`,
    );
    expect(withGitHub.r.scope.activity_sources?.github.asked).toBe(true);
    expect(withGitHub.r.scope.activity_sources?.github.reason).toMatch(
      /issues and pull requests of octo-org\/memory-repo: 2 read now, 1 issues and 1 pull requests known/,
    );
    // One listing covers both, one page, newest first; the next read asks only for what
    // changed since the newest seen (`since`).
    expect(fake.calls("issues/list-for-repo")).toBe(listed + 1);
    expect(fake.calls("pulls/list")).toBe(pullsListed);
    const again = await freshness(env);
    expect(again.issue?.fresh).toBe(true);
    const reads = fake.requests.filter((q) => q.operationId === "issues/list-for-repo");
    expect(reads).toHaveLength(listed + 2);
    const [first, second] = reads.slice(-2).map((q) => new URLSearchParams(q.query));
    expect(first?.get("state")).toBe("all");
    expect(first?.get("sort")).toBe("updated");
    expect(first?.has("since")).toBe(false);
    expect(second?.get("since")).toBe(created.data.updated_at);
    expect(existsSync(join(memory.dir, ".engram", "graph", "github.json"))).toBe(true);

    // GitHub gone: the cached activity still counts, and the scope says so.
    await fake.stop();
    const offline = await freshness(env);
    expect(offline.l?.fresh).toBe(true);
    expect(offline.r.scope.activity_sources?.github.reason).toMatch(
      /did not answer.*1 issues and 1 pull requests of octo-org\/memory-repo as cached/,
    );

    // Not configured: git alone, and the answer says so.
    const gitOnly = await freshness({});
    expect(gitOnly.l?.fresh).toBe(false);
    expect(gitOnly.l?.graph_activity).toBeNull();
    expect(gitOnly.r.scope.activity_sources).toEqual({
      git: true,
      github: { asked: false, reason: expect.stringMatching(/not configured/) },
    });
  });
});
