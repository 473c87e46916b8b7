/**
 * What `director run --pr` says, through the bin: a short summary with the pull request's body
 * in a file (JSON keeps it whole), and a missing base branch named with the fix and the
 * branches there are.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, director, jsonOf } from "../support/bins.js";
import { BRANCH, proposeRun, type RunJson, remember, setup } from "../support/proposals.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const env = { SOURCE_DATE_EPOCH: "1800000000" };

describe("director run --pr output", () => {
  it("prints a short summary and where the body is; --json keeps the body", async () => {
    const { clone } = await setup(dirs);
    await remember(clone, ["the body goes to a file", "the summary stays short"]);
    const r = await director(["run", "--pr", "--force"], { cwd: clone.dir, env });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/no GitHub configured; the pull request would be "memory: /);
    const where = /its body \((\d+) lines\): (\S+) \(in --json: proposal\.would_open\.body\)/.exec(
      r.stdout,
    );
    expect(where, r.stdout).not.toBeNull();
    expect(where?.[2]).toBe(join(".engram", "pull-request.md"));
    const body = readFileSync(join(clone.dir, ".engram", "pull-request.md"), "utf8");
    expect(body.trimEnd().split("\n")).toHaveLength(Number(where?.[1]));
    expect(body).toContain("the body goes to a file");
    // No line of the body is printed.
    expect(r.stdout).not.toContain("the body goes to a file");
    expect(r.stdout.split("\n").length).toBeLessThan(20);

    await remember(clone, ["json keeps the body whole"]);
    const json = await proposeRun(clone, [], 1_800_000_100);
    expect(json.code, describeResult(json)).toBe(0);
    expect(jsonOf<RunJson>(json).proposal.would_open?.body).toContain("json keeps the body whole");
  });

  it("names --base, [github] base_branch and the remote's branches when the base is missing", async () => {
    const { origin, clone } = await setup(dirs);
    // The project's default branch is master: main does not exist on the remote.
    git(clone.dir, ["push", "-q", "origin", "main:master", "main:release"]);
    git(origin, ["symbolic-ref", "HEAD", "refs/heads/master"]);
    git(origin, ["branch", "-D", "main"]);
    await remember(clone, ["the base is master"]);
    const r = await director(["run", "--pr", "--force"], { cwd: clone.dir, env });
    expect(r.code, describeResult(r)).not.toBe(0);
    expect(r.stderr).toContain("origin has no branch main to propose memory against");
    expect(r.stderr).toContain("its branches: master, release");
    expect(r.stderr).toContain("--base BRANCH");
    expect(r.stderr).toContain("[github] base_branch");

    const fixed = await proposeRun(clone, ["--base", "master"]);
    expect(fixed.code, describeResult(fixed)).toBe(0);
    expect(git(origin, ["rev-parse", "--verify", `refs/heads/${BRANCH}`]).trim()).toMatch(
      /^[0-9a-f]{40}$/,
    );
  });

  it("without a remote, names the local branches", async () => {
    const { clone } = await setup(dirs);
    git(clone.dir, ["remote", "remove", "origin"]);
    git(clone.dir, ["branch", "-m", "main", "master"]);
    await remember(clone, ["a local master"]);
    const r = await director(["run", "--pr", "--force"], { cwd: clone.dir, env });
    expect(r.code, describeResult(r)).not.toBe(0);
    expect(r.stderr).toContain("this repository has no branch main");
    expect(r.stderr).toContain("its branches: master");
    expect(r.stderr).toContain("--base BRANCH");
  });
});
