/** Pull requests as the history records them (pure): titles from merges, branch commits. */
import { describe, expect, it } from "vitest";
import { classifyHistory } from "../../src/core/history/git-events.js";
import { linkPullRequests, mergeTitle } from "../../src/core/history/pull-requests.js";

const commit = (sha: string, message: string, parentShas: string[] = []) => ({
  sha,
  message,
  parents: parentShas.length,
  parentShas,
});

describe("pull requests in a history", () => {
  it("reads a merge's title from its body, never a merge note", () => {
    expect(mergeTitle("Merge pull request #7 from a/b\n\nUse pnpm\n\nmore")).toEqual({
      pr: 7,
      title: "Use pnpm",
    });
    expect(mergeTitle("Merge pull request #7 from a/b")).toBeUndefined();
    expect(mergeTitle("Merge pull request #8 from a/b\n\nMerge rebased 4.x into master")).toBe(
      undefined,
    );
    expect(mergeTitle("Use pnpm (#7)")).toBeUndefined();
  });

  it("places each branch commit in the pull request that brought it to the main line", () => {
    // a - b ------- m2 (main)
    //      \       /
    //       c - m1     (m1 merges d, itself on a branch of the branch)
    //        \  /
    //         d
    const commits = [
      commit("a", "Start"),
      commit("b", "Main work", ["a"]),
      commit("c", "Branch work", ["b"]),
      commit("d", "Inner work", ["c"]),
      commit("m1", "Merge pull request #1 from x/inner\n\nInner title", ["c", "d"]),
      commit("m2", "Merge pull request #2 from x/outer\n\nOuter title", ["b", "m1"]),
    ];
    const links = linkPullRequests(commits);
    // #1 was merged into #2's branch: #2 landed them all.
    expect(Object.fromEntries(links.member)).toEqual({ d: 2, c: 2, m1: 2 });
    expect(Object.fromEntries(links.titles)).toEqual({ 1: "Inner title", 2: "Outer title" });
  });

  it("gives a terse decision its pull request's title, by (#N) or by its merge", () => {
    const read = classifyHistory([
      commit("a", "Start"),
      commit("b", "Switch to pnpm (#5)", ["a"]),
      commit("c", "Merge pull request #5 from x/pnpm\n\nOne lockfile for every workspace", [
        "a",
        "b",
      ]),
      commit("d", "Drop support for node 16", ["c"]),
      commit("e", "Merge pull request #6 from x/node\n\nDrop support for node 16", ["c", "d"]),
    ]);
    expect(read[1]?.cls.decision).toEqual({
      title: "Switch to pnpm",
      rationale: "Pull request #5: One lockfile for every workspace",
      confidence: 0.8,
    });
    expect(read[1]?.pr).toBe(5);
    // A title that says nothing the subject does not is no reason.
    expect(read[3]?.cls.decision).toEqual({ title: "Drop support for node 16", confidence: 0.8 });
    expect(read[3]?.pr).toBe(6);
  });

  it("gives a merge's decision the reason its branch gave", () => {
    const read = classifyHistory([
      commit("a", "Start"),
      commit("b", "Drop support for node 16\n\nIt lacks fetch, which the client needs.", ["a"]),
      commit("c", "Merge pull request #9 from x/node\n\nDrop support for node 16", ["a", "b"]),
    ]);
    expect(read[2]?.cls.decision).toEqual({
      title: "Drop support for node 16",
      rationale: "It lacks fetch, which the client needs.",
      confidence: 0.8,
    });
  });
});
