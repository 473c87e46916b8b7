/**
 * The state folder's two git questions answered from files: each "surely" agrees with git
 * wherever it is given, and gives way to git (false) wherever the files leave any doubt.
 */
import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { surelyIgnored, surelyUntracked } from "../../src/git/state-answers.js";
import { childEnv } from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** git's own answers, as the state folder check asks them. */
function gitTracks(repo: TempRepo, dir: string): boolean {
  return git(repo.dir, ["ls-files", "-z", "--", `${dir}/`]) !== "";
}
function gitIgnoresFolder(repo: TempRepo, dir: string): boolean {
  try {
    execFileSync("git", ["check-ignore", "-q", "--", `${dir}/`], {
      cwd: repo.dir,
      env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
      stdio: "ignore",
    });
    return true;
  } catch {
    return false;
  }
}

describe("surelyIgnored", () => {
  it.each([
    ["/.engram/\n", true],
    ["node_modules/\n.engram/\n", true],
    ["/.engram\n", true],
    [".engram\n", true],
    ["\uFEFF/.engram/\n", true],
    // Ignored, but not surely from this file: git decides.
    [".*\n", false],
    ["/.engram/ \n", false],
    ["/.engram/\r\n", false],
    // Not ignored, or taken back.
    ["", false],
    ["/.engram/\n!/.engram/\n", false],
    ["\uFEFF!/.engram/\n/.engram/\n", false],
    ["/.engram/x\n", false],
  ])("%j: %s, and git agrees where it says so", (text, expected) => {
    const repo = dirs.repo("engram-ignored-");
    repo.write(".gitignore", text);
    expect(surelyIgnored(repo.dir, ".engram")).toBe(expected);
    if (expected) expect(gitIgnoresFolder(repo, ".engram")).toBe(true);
  });

  it("reads no .gitignore through a symbolic link, nor a folder that is not a repository", () => {
    const repo = dirs.repo("engram-ignored-");
    repo.write("elsewhere", "/.engram/\n");
    symlinkSync(join(repo.dir, "elsewhere"), join(repo.dir, ".gitignore"));
    expect(surelyIgnored(repo.dir, ".engram")).toBe(false);
    const plain = dirs.dir("engram-not-repo-");
    writeFileSync(join(plain, ".gitignore"), "/.engram/\n");
    expect(surelyIgnored(plain, ".engram")).toBe(false);
  });

  it("leaves a nested state folder to git", () => {
    const repo = dirs.repo("engram-ignored-");
    repo.write(".gitignore", "/state/engram/\n");
    expect(surelyIgnored(repo.dir, "state/engram")).toBe(false);
  });
});

describe("surelyUntracked", () => {
  it("agrees with git ls-files before any commit, after commits, and once a file is added", () => {
    const repo = dirs.repo("engram-tracked-");
    expect(surelyUntracked(repo.dir, ".engram")).toBe(true); // no index yet
    repo.write(".gitignore", "/.engram/\n");
    repo.write("src/a.txt", "a");
    repo.write(".engram/journal", "secret");
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "one"]);
    expect(gitTracks(repo, ".engram")).toBe(false);
    expect(surelyUntracked(repo.dir, ".engram")).toBe(true);
    git(repo.dir, ["add", "-f", ".engram/journal"]);
    expect(gitTracks(repo, ".engram")).toBe(true);
    expect(surelyUntracked(repo.dir, ".engram")).toBe(false);
  });

  it("gives way to git on a path holding the name, an index of version 4, a split index", () => {
    const repo = dirs.repo("engram-tracked-");
    repo.write("docs/.engram/readme", "about");
    git(repo.dir, ["add", "-A"]);
    expect(gitTracks(repo, ".engram")).toBe(false);
    expect(surelyUntracked(repo.dir, ".engram")).toBe(false); // the bytes are there

    const v4 = dirs.repo("engram-tracked-");
    v4.write("a.txt", "a");
    git(v4.dir, ["add", "-A"]);
    git(v4.dir, ["update-index", "--index-version", "4"]);
    expect(surelyUntracked(v4.dir, ".engram")).toBe(false);

    const split = dirs.repo("engram-tracked-");
    split.write("a.txt", "a");
    git(split.dir, ["add", "-A"]);
    git(split.dir, ["update-index", "--split-index"]);
    expect(surelyUntracked(split.dir, ".engram")).toBe(false);
  });

  it("leaves a linked worktree and a folder that is no repository to git", () => {
    const repo = dirs.repo("engram-tracked-");
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "one"]);
    const tree = join(dirs.dir("engram-tracked-wt-"), "wt");
    git(repo.dir, ["worktree", "add", "-q", "-b", "side", tree]);
    expect(surelyUntracked(tree, ".engram")).toBe(false);
    expect(surelyUntracked(dirs.dir("engram-not-repo-"), ".engram")).toBe(false);
  });
});
