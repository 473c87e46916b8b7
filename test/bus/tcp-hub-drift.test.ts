/**
 * The hub's drift judge (`MainJudge`) on a real git repository: workers who say hello at the
 * same moment are all judged, and those with one view of main share one judgement.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import { MainJudge } from "../../src/bus/hub-drift.js";
import * as mainDrift from "../../src/repo/main-drift.js";
import { git, TempDirs } from "../support/repo.js";

// The real git reads, counted.
vi.mock("../../src/repo/main-drift.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/repo/main-drift.js")>();
  return {
    ...real,
    findMain: vi.fn(real.findMain),
    judgeAgainstMain: vi.fn(real.judgeAgainstMain),
  };
});

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const POLICY = {
  max_commits_behind: 0,
  max_seconds_behind: 10 * 365 * 86_400,
  require_catalog_hash_match: false,
  required_action: "merge_main" as const,
};

describe("MainJudge", () => {
  it("judges every worker of a burst; one tip read and one judgement per view of main for all", async () => {
    const repo = dirs.repo();
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "one"]);
    const old = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "two"]);
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "three"]);
    const judge = new MainJudge(repo.dir, POLICY);
    // Fifty hellos at once, some with views of their own, most sharing one.
    const views = Array.from({ length: 50 }, (_, i) => ({
      main_ancestor_sha: old,
      catalog_hash_seen: `sha256:${String(i % 5).repeat(64)}`,
    }));
    const verdicts = await Promise.all(views.map((view) => judge.judge(view)));
    for (const verdict of verdicts) {
      expect(verdict).toMatchObject({ reason: "behind_main", commits_behind: 2 });
    }
    // One read of main's tip for the burst, one judgement per distinct view (five), not 50.
    expect(vi.mocked(mainDrift.findMain)).toHaveBeenCalledTimes(1);
    expect(vi.mocked(mainDrift.judgeAgainstMain)).toHaveBeenCalledTimes(5);
    // A worker on main's tip needs nothing.
    const tip = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    expect(await judge.judge({ main_ancestor_sha: tip })).toBeUndefined();
  });
});
