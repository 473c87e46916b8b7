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
  const env = { SOURCE_DATE_EPOCH: String(Date.parse(TWO_YEARS_AGO) / 1000) };
  const emit = await worker(
    ["emit", "--repo", memory.dir, "--kind", "fact", "--text", "Retries back off as PR #1 set up"],
    { cwd: memory.dir, env },
  );
  expect(emit.code, emit.stderr).toBe(0);
  const run = await director(["run", "--force", "--repo", memory.dir], { cwd: memory.dir, env });
  expect(run.code, run.stderr).toBe(0);
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

/** Freshness a day from now: the learning is two years old, its pull request moves today. */
async function freshness(env: Record<string, string>) {
  const ctx = await openContext({ repo: memory.dir });
  const now = Math.floor(Date.now() / 1000) + 86_400;
  const r = await learningFreshness(ctx, { thresholdDays: 30, now, env });
  const l = r.learnings.find((x) => x.text.includes("PR #1"));
  return { r, l };
}

describe("freshness with GitHub", () => {
  it("follows a linked pull request's updated_at, caches it, and says which sources it read", async () => {
    await commitFiles(1);
    await upsertPullRequest(gh, prRequest());
    const env = {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${owner}/${repo}`,
      GITHUB_API_URL: fake.url,
    };

    const listed = fake.calls("pulls/list");
    const withGitHub = await freshness(env);
    expect(withGitHub.l?.temporal_fresh).toBe(false);
    expect(withGitHub.l?.fresh).toBe(true);
    expect(withGitHub.l?.graph_activity?.entity).toBe("pr:1");
    expect(withGitHub.l?.why).toMatch(/pr:1 last moved 1 days ago \(pull request #1 updated\)/);
    expect(withGitHub.r.scope.activity_sources?.github.asked).toBe(true);
    expect(withGitHub.r.scope.activity_sources?.github.reason).toMatch(/1 known/);
    // One page, newest first: a read asks only for what changed since the last one.
    expect(fake.calls("pulls/list")).toBe(listed + 1);
    expect(existsSync(join(memory.dir, ".engram", "graph", "github.json"))).toBe(true);

    // GitHub gone: the cached activity still counts, and the scope says so.
    await fake.stop();
    const offline = await freshness(env);
    expect(offline.l?.fresh).toBe(true);
    expect(offline.r.scope.activity_sources?.github.reason).toMatch(
      /did not answer.*1 pull requests .* as cached/,
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
