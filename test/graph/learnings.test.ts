/**
 * `worker learnings`: propose -> confirm -> persist. Without GitHub, git decides (on main:
 * confirmed at the commit that added it; only on the engram branch: proposed); with GitHub
 * (the local GitHub-compatible server), the engram pull requests do (open: proposed, merged:
 * confirmed at the merge, closed unmerged: rejected).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { LearningEntry } from "../../src/core/graph/lifecycle.js";
import { createGitHub } from "../../src/github/client.js";
import type { LearningsReport } from "../../src/graph/learning-states.js";
import {
  assertBuilt,
  childEnv,
  describeResult,
  director,
  jsonOf,
  worker,
} from "../support/bins.js";
import { useFakeGitHub } from "../support/fake-github-hooks.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const SEED = join(import.meta.dirname, "..", "fixtures", "pai-seed", "seed.json");
const TOKEN = "ghs_fakeTokenForTheLocalServer0000000000";
const dirs = new TempDirs();
const github = useFakeGitHub(dirs, TOKEN, "engram-learnings-github-");
beforeAll(() => assertBuilt());

async function remember(repo: TempRepo, text: string, env: Record<string, string> = {}) {
  const r = await worker(["emit", "--kind", "lesson", "--text", text, "--topic", "flow"], {
    cwd: repo.dir,
    env,
  });
  expect(r.code, describeResult(r)).toBe(0);
}

async function learnings(
  repo: TempRepo,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<LearningsReport> {
  return jsonOf<LearningsReport>(
    await worker(["learnings", ...args, "--json"], { cwd: repo.dir, env }),
  );
}

function byText(r: LearningsReport): Map<string, LearningEntry> {
  return new Map(r.learnings.map((l) => [l.text, l]));
}

describe("worker learnings without GitHub", () => {
  it("confirms what main holds at the commit that added it, proposes what only the engram branch holds", async () => {
    const repo = dirs.repo("engram-learnings-");
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);

    await remember(repo, "Pin the Node version in src/engine/ci.yml");
    expect((await director(["ingest", "--from-seed", SEED], { cwd: repo.dir })).code).toBe(0);
    expect((await director(["run", "--force"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    execFileSync("git", ["commit", "-q", "-m", "memory"], {
      cwd: repo.dir,
      env: childEnv({
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_COMMITTER_DATE: "2026-04-01T12:00:00Z",
        GIT_AUTHOR_DATE: "2026-04-01T12:00:00Z",
      }),
    });

    await remember(repo, "Run the linter before pushing");
    const pr = await director(["run", "--pr", "--force", "--json"], { cwd: repo.dir });
    expect(pr.code, describeResult(pr)).toBe(0);

    const all = await learnings(repo);
    expect(all.github.asked).toBe(false);
    const texts = byText(all);
    expect(texts.get("Pin the Node version in src/engine/ci.yml")).toMatchObject({
      status: "confirmed",
      type: "insight",
      where: "main",
      confirmed_at: "2026-04-01T12:00:00Z",
      entities: ["file:src/engine/ci.yml"],
      evidence: 1,
    });
    // Imported learnings keep the confirmation time of the memory they came from.
    expect(texts.get("Runs the unit tests before every commit")).toMatchObject({
      status: "confirmed",
      type: "pattern",
      source: "session_2026-03-02",
      confirmed_at: "2026-03-02T10:35:00.000Z",
    });
    expect(texts.get("Run the linter before pushing")).toMatchObject({
      status: "proposed",
      where: "branch",
      confirmed_at: null,
      pr: null,
    });
    const proposed = await learnings(repo, ["--status", "proposed"]);
    expect(proposed.learnings.map((l) => l.text)).toEqual(["Run the linter before pushing"]);
    expect(proposed.counts).toMatchObject({ proposed: 1, confirmed: 5, rejected: 0 });

    const bad = await worker(["learnings", "--status", "maybe"], { cwd: repo.dir });
    expect(bad.code).toBe(2);
  });
});

describe("worker learnings with GitHub", () => {
  it("follows the engram pull request: open proposes, a merge confirms, a close unmerged rejects", async () => {
    const { fake, apiUrl } = github;
    const env = {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
      GITHUB_API_URL: apiUrl,
    };
    const repo = dirs.repo("engram-learnings-pr-");
    git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    git(repo.dir, ["push", "-q", "origin", "main"]);
    const propose = async (epoch: number) => {
      const r = await director(["run", "--pr", "--force", "--json"], {
        cwd: repo.dir,
        env: { ...env, SOURCE_DATE_EPOCH: String(epoch) },
        timeoutMs: 90_000,
      });
      expect(r.code, describeResult(r)).toBe(0);
      return jsonOf<{ proposal: { pr: { number: number } | null } }>(r).proposal.pr
        ?.number as number;
    };
    const gh = createGitHub({ token: TOKEN, apiUrl });
    const repoRef = { owner: fake.owner, repo: fake.repo };

    await remember(repo, "Merged lessons are confirmed");
    const first = await propose(1_800_000_000);
    const open = byText(await learnings(repo, [], env));
    expect(open.get("Merged lessons are confirmed")).toMatchObject({
      status: "proposed",
      where: "open pull request",
      pr: first,
    });

    await gh.octokit.rest.pulls.merge({ ...repoRef, pull_number: first });
    const mergedAt = fake.pull(first)?.mergedAt as string;
    const merged = await learnings(repo, [], env);
    expect(merged.github).toMatchObject({ asked: true, pulls: 1 });
    expect(byText(merged).get("Merged lessons are confirmed")).toMatchObject({
      status: "confirmed",
      pr: first,
      confirmed_at: mergedAt.replace(/\.\d{3}Z$/, "Z"),
    });

    await remember(repo, "Closed lessons are rejected");
    const second = await propose(1_800_000_100);
    expect(second).not.toBe(first);
    await gh.octokit.rest.pulls.update({ ...repoRef, pull_number: second, state: "closed" });
    const rejected = await learnings(repo, ["--status", "rejected"], env);
    expect(rejected.learnings.map((l) => [l.text, l.pr])).toEqual([
      ["Closed lessons are rejected", second],
    ]);
    expect(rejected.counts).toMatchObject({ confirmed: 1, rejected: 1 });
  });
});
