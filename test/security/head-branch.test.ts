/**
 * Branch names are not trusted (issue 25 item 6): `[github] head_branch` from a pull request
 * cannot point the Director at main or at someone's branch, and `run --pr` never rewrites a
 * branch holding commits engram did not make. Real repositories, a bare origin, the bins.
 */
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, director } from "../support/bins.js";
import { BRANCH, proposeRun, remember, setup, sha } from "../support/proposals.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("the Director writes only an engram/ branch it owns", () => {
  it("[github] head_branch = main (or the base, or any other branch): refused, main untouched", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["memory goes through review"]);
    const main = sha(origin, "main");
    for (const [branch, base] of [
      ["main", "main"],
      ["release", "release"],
      ["feature/x", "main"],
      ["engram/", "main"],
    ] as const) {
      clone.writeConfig(
        `[memory]\nbuffer_keep_recent_events = 0\n[github]\nhead_branch = "${branch}"\nbase_branch = "${base}"\n`,
      );
      const r = await proposeRun(clone);
      expect(r.code, describeResult(r)).toBe(2);
      expect(r.stderr).toContain("github.head_branch");
    }
    // The command line cannot name the base either.
    clone.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    const cli = await proposeRun(clone, ["--branch", "main"]);
    expect(cli.code, describeResult(cli)).toBe(2);
    expect(cli.stderr).toContain("is the base branch main");
    expect(sha(origin, "main")).toBe(main);
    expect(git(origin, ["branch", "--list"]).trim()).toBe("* main");
  });

  it("never force-pushes over a commit engram did not make on its branch", async () => {
    const { origin, clone } = await setup(dirs);
    // Someone else's work sits on engram/memory (a human commit, not memory).
    git(clone.dir, ["checkout", "-q", "-b", BRANCH]);
    clone.write("src/mine.ts", "export const mine = 1;\n");
    git(clone.dir, ["add", "-A"]);
    git(clone.dir, ["commit", "-q", "-m", "work that is not memory"]);
    git(clone.dir, ["push", "-q", "origin", BRANCH]);
    git(clone.dir, ["checkout", "-q", "main"]);
    const theirs = sha(origin, BRANCH);

    await remember(clone, ["the Director must not lose this commit"]);
    const r = await proposeRun(clone);
    expect(r.code, describeResult(r)).toBe(3);
    expect(r.stderr).toContain(
      `${BRANCH} holds commit ${theirs.slice(0, 12)} that engram did not make`,
    );
    // Their commit is still there, on the remote and locally.
    expect(sha(origin, BRANCH)).toBe(theirs);
    expect(git(origin, ["cat-file", "-t", theirs]).trim()).toBe("commit");

    // Once that work has moved away and the branch is gone, the Director proposes again.
    git(origin, ["update-ref", "-d", `refs/heads/${BRANCH}`]);
    git(clone.dir, ["branch", "-q", "-D", BRANCH]);
    const again = await proposeRun(clone);
    expect(again.code, describeResult(again)).toBe(0);
    expect(sha(origin, `${BRANCH}^`)).toBe(sha(origin, "main"));
    // And a second run over its own commit is an ordinary update.
    await remember(clone, ["a second fact"]);
    const next = await proposeRun(clone, [], 1_800_000_100);
    expect(next.code, describeResult(next)).toBe(0);
  });

  it("a merge of main into its branch (Update branch) loses nothing: not counted as foreign", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["first"]);
    expect((await proposeRun(clone)).code).toBe(0);
    // Main moves on; someone presses "Update branch" on the engram pull request.
    clone.write("src/app.ts", "export const app = 2;\n");
    git(clone.dir, ["commit", "-qam", "main moves"]);
    git(clone.dir, ["push", "-q", "origin", "main"]);
    git(clone.dir, ["fetch", "-q", "origin"]);
    git(clone.dir, ["checkout", "-q", "-b", "update", `origin/${BRANCH}`]);
    git(clone.dir, ["merge", "-q", "--no-ff", "--no-edit", "main"]);
    git(clone.dir, ["push", "-q", "origin", `update:${BRANCH}`]);
    git(clone.dir, ["checkout", "-q", "main"]);
    const guard = await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`], {
      cwd: clone.dir,
    });
    expect(guard.stdout).not.toContain("not the Director's");
    await remember(clone, ["second"]);
    const r = await proposeRun(clone, [], 1_800_000_100);
    expect(r.code, describeResult(r)).toBe(0);
    expect(git(origin, ["merge-base", "main", BRANCH]).trim()).toBe(sha(origin, "main"));
  });

  it("a commit with the Director's name that changes code is still not the Director's", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["first"]);
    expect((await proposeRun(clone)).code).toBe(0);
    // A forged author on top of the Director's commit, changing code.
    git(clone.dir, ["fetch", "-q", "origin"]);
    git(clone.dir, ["checkout", "-q", "-b", "forge", `origin/${BRANCH}`]);
    clone.write("src/app.ts", "export const app = 666;\n");
    git(clone.dir, ["add", "-A"]);
    git(clone.dir, [
      "-c",
      "user.name=engram director",
      "-c",
      "user.email=director@engram.invalid",
      "commit",
      "-q",
      "--author=engram director <director@engram.invalid>",
      "-m",
      "memory: looks like one",
    ]);
    git(clone.dir, ["push", "-q", "origin", `forge:${BRANCH}`]);
    git(clone.dir, ["checkout", "-q", "main"]);
    const forged = sha(origin, BRANCH);
    await remember(clone, ["second"]);
    const r = await proposeRun(clone, [], 1_800_000_100);
    expect(r.code, describeResult(r)).toBe(3);
    expect(r.stderr).toContain("changes src/app.ts, which is not memory");
    expect(sha(origin, BRANCH)).toBe(forged);
    // The guard says the same of that branch.
    const guard = await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`], {
      cwd: clone.dir,
    });
    expect(guard.code, describeResult(guard)).toBe(1);
    expect(guard.stdout).toContain(
      "but not the Director's: changes src/app.ts, which is not memory",
    );
  });
});
