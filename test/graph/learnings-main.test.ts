/**
 * One notion of main: `worker learnings` judges confirmed/proposed against the main `worker
 * check` reads (the newer of `main` and `origin/main`), and an engram branch already merged
 * proposes nothing, so what a rollback removed from main is not "proposed" again.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LearningsReport } from "../../src/graph/learning-states.js";
import { assertBuilt, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

async function remember(cwd: string, text: string): Promise<void> {
  const r = await worker(["emit", "--kind", "lesson", "--text", text, "--topic", "flow"], {
    cwd,
    env: GIT_ENV,
  });
  expect(r.code, describeResult(r)).toBe(0);
}

/** A Director cycle proposed on the engram branch, merged into main and pushed, as a reviewer would. */
async function proposeAndMerge(cwd: string): Promise<void> {
  const pr = await director(["run", "--pr", "--flush", "--json"], { cwd, env: GIT_ENV });
  expect(pr.code, describeResult(pr)).toBe(0);
  git(cwd, ["merge", "-q", "--no-ff", "-m", "merge memory", "engram/memory"]);
  git(cwd, ["push", "-q", "origin", "main", "engram/memory"]);
}

async function statusOf(cwd: string): Promise<Map<string, string>> {
  const r = jsonOf<LearningsReport>(await worker(["learnings", "--json"], { cwd, env: GIT_ENV }));
  return new Map(r.learnings.map((l) => [l.text, l.status]));
}

describe("worker learnings and main", () => {
  it("in a clone whose main is behind origin/main, merged learnings are confirmed; a rolled-back one is not proposed", async () => {
    const origin = join(dirs.dir("engram-lm-origin-"), "origin.git");
    const repo = dirs.repo("engram-lm-director-").dir;
    git(repo, ["init", "-q", "--bare", "-b", "main", origin]);
    git(repo, ["remote", "add", "origin", origin]);
    expect((await director(["init"], { cwd: repo })).code).toBe(0);
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", "init"]);
    git(repo, ["push", "-q", "origin", "main"]);
    const clone = join(dirs.dir("engram-lm-clone-"), "repo");
    git(repo, ["clone", "-q", origin, clone]);

    await remember(repo, "Pin the Node version");
    await proposeAndMerge(repo);
    // The clone fetched but never merged: its local main is behind origin/main.
    git(clone, ["fetch", "-q", "origin"]);
    expect(git(clone, ["rev-parse", "main"])).not.toBe(git(clone, ["rev-parse", "origin/main"]));
    expect((await statusOf(clone)).get("Pin the Node version")).toBe("confirmed");

    // A second learning merged, then rolled back on main: the merged branch still holds it.
    const before = jsonOf<{ versions: { version: number }[] }>(
      await director(["history", "--json"], { cwd: repo }),
    ).versions[0]?.version as number;
    await remember(repo, "Deploy on Fridays");
    await proposeAndMerge(repo);
    expect((await statusOf(repo)).get("Deploy on Fridays")).toBe("confirmed");
    const back = await director(["rollback", String(before), "--json"], { cwd: repo });
    expect(back.code, describeResult(back)).toBe(0);
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", "rollback"]);
    git(repo, ["push", "-q", "origin", "main"]);
    expect((await statusOf(repo)).get("Deploy on Fridays")).not.toBe("proposed");
    expect((await statusOf(repo)).get("Pin the Node version")).toBe("confirmed");
    // The clone, fetched again but still on its old main, agrees.
    git(clone, ["fetch", "-q", "origin"]);
    const inClone = await statusOf(clone);
    expect(inClone.get("Deploy on Fridays")).not.toBe("proposed");
    expect(inClone.get("Pin the Node version")).toBe("confirmed");
  });
});
