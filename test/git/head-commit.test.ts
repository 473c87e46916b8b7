import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { headCommitOf } from "../../src/git/refs.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("headCommitOf", () => {
  it("reads HEAD as git rev-parse does: loose and packed branches, detached, a linked worktree", () => {
    const repo = dirs.repo("engram-head-");
    expect(headCommitOf(repo.dir)).toBeUndefined(); // no commit yet
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "one"]);
    const rev = (dir: string) => git(dir, ["rev-parse", "HEAD"]).trim();
    expect(headCommitOf(repo.dir)).toBe(rev(repo.dir));
    git(repo.dir, ["pack-refs", "--all"]);
    expect(headCommitOf(repo.dir)).toBe(rev(repo.dir));
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "two"]);
    expect(headCommitOf(repo.dir)).toBe(rev(repo.dir));
    const tree = join(dirs.dir("engram-head-wt-"), "wt");
    git(repo.dir, ["worktree", "add", "-q", "-b", "side", tree]);
    git(tree, ["commit", "-q", "--allow-empty", "-m", "three"]);
    expect(headCommitOf(tree)).toBe(rev(tree));
    expect(headCommitOf(tree)).not.toBe(rev(repo.dir));
    git(repo.dir, ["checkout", "-q", "--detach", "HEAD~1"]);
    expect(headCommitOf(repo.dir)).toBe(rev(repo.dir));
  });
});
