/**
 * Which main a worker compares with: the newest of origin/main, main, origin/master, master.
 * Commit times have a second's grain, and a local main committed in the same second as the
 * origin/main it descends from is the newer one. Taking origin/main on a tie made the
 * Director's own checkout, right after it committed its memory, look out of sync with a main
 * it is ahead of (a flaky agent-loop test, more often as cycles got faster).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findMain } from "../../src/repo/main-drift.js";
import { childEnv } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** A commit with both dates fixed to `at` (seconds), so two commits share a second for sure. */
function commitAt(dir: string, file: string, at: number): string {
  writeFileSync(join(dir, file), file);
  const env = childEnv({
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_DATE: `@${at} +0000`,
    GIT_COMMITTER_DATE: `@${at} +0000`,
  });
  const git = (args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", ...args], {
      cwd: dir,
      env,
      encoding: "utf8",
    }).trim();
  git(["add", "-A"]);
  git(["commit", "-q", "-m", file]);
  return git(["rev-parse", "HEAD"]);
}

describe("the newest main", () => {
  it("of two in the same second, is the one that descends from the other", async () => {
    const repo = dirs.repo("engram-main-newest-");
    const at = 1_767_225_600;
    const pushed = commitAt(repo.dir, "a.txt", at);
    execFileSync("git", ["update-ref", "refs/remotes/origin/main", pushed], { cwd: repo.dir });
    const local = commitAt(repo.dir, "b.txt", at);
    execFileSync("git", ["update-ref", "refs/heads/main", local], { cwd: repo.dir });
    const main = await findMain(repo.dir);
    expect(main?.sha).toBe(local);
    expect(main?.ref).toBe("main");
  });

  it("of two in the same second with neither descending, stays the remote's view", async () => {
    const repo = dirs.repo("engram-main-newest-");
    const at = 1_767_225_600;
    const base = commitAt(repo.dir, "a.txt", at - 10);
    const theirs = commitAt(repo.dir, "b.txt", at);
    execFileSync("git", ["update-ref", "refs/remotes/origin/main", theirs], { cwd: repo.dir });
    execFileSync("git", ["reset", "-q", "--hard", base], { cwd: repo.dir });
    const ours = commitAt(repo.dir, "c.txt", at);
    execFileSync("git", ["update-ref", "refs/heads/main", ours], { cwd: repo.dir });
    const main = await findMain(repo.dir);
    expect(main?.ref).toBe("origin/main");
    expect(main?.sha).toBe(theirs);
  });
});
