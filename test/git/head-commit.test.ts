import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasNoRefs, headCommitOf, readHead } from "../../src/git/refs.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("headCommitOf", () => {
  it("reads HEAD as git rev-parse does: loose and packed branches, detached, a linked worktree", () => {
    const repo = dirs.repo("engram-head-");
    expect(headCommitOf(repo.dir)).toBeUndefined(); // no commit yet
    expect(readHead(repo.dir)).toEqual({ unborn: true });
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

  it("says unborn only when git would: a new branch, never a ref it cannot read", () => {
    const repo = dirs.repo("engram-head-unborn-");
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "one"]);
    git(repo.dir, ["checkout", "-q", "--orphan", "fresh"]);
    expect(readHead(repo.dir)).toEqual({ unborn: true });
    const gitDir = join(repo.dir, ".git");
    // A ref file git would follow but that holds no id: git decides, not the files.
    writeFileSync(join(gitDir, "refs", "heads", "fresh"), "ref: refs/heads/main\n");
    expect(readHead(repo.dir)).toBeUndefined();
    // Refs in a reftable: the loose files say nothing.
    const other = dirs.repo("engram-head-reftable-");
    mkdirSync(join(other.dir, ".git", "reftable"));
    expect(readHead(other.dir)).toBeUndefined();
  });

  it("knows a repository with no ref at all, and nothing else, as new", () => {
    const repo = dirs.repo("engram-head-new-");
    expect(hasNoRefs(repo.dir)).toBe(true);
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "one"]);
    expect(hasNoRefs(repo.dir)).toBe(false);
    // An orphan branch: HEAD has no commit, but other refs name some.
    git(repo.dir, ["checkout", "-q", "--orphan", "fresh"]);
    expect(hasNoRefs(repo.dir)).toBe(false);
    const packed = dirs.repo("engram-head-packed-");
    writeFileSync(join(packed.dir, ".git", "packed-refs"), "# pack-refs with: peeled\n");
    expect(hasNoRefs(packed.dir)).toBe(false);
  });
});
