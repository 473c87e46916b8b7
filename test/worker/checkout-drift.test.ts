/**
 * `worker check` judges the worker's own checkout: it asks for a sync only when main has
 * something to bring in, names uncommitted Director output as such, and `worker sync` never
 * answers "nothing to do" to a sync that check asks for.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeCheckout, judgeDrift } from "../../src/core/swarm/drift.js";
import { assertBuilt, DIRECTOR_BIN, runBin, WORKER_BIN } from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const policy = {
  max_commits_behind: 20,
  max_seconds_behind: 86_400,
  require_catalog_hash_match: true,
  required_action: "merge_main" as const,
};
const verdict = (over: Partial<Parameters<typeof judgeDrift>[0]> = {}) =>
  judgeDrift({
    mainSha: "a".repeat(40),
    mainTime: 1_000_000,
    mergeBaseTime: 1_000_000,
    commitsBehind: 0,
    localCatalogHash: "sha256:here",
    mainCatalogHash: "sha256:main",
    policy,
    ...over,
  });

describe("judgeCheckout", () => {
  it("names uncommitted memory before any sync, and in sync a branch that merged main", () => {
    const clean = { catalogUncommitted: false, mainMerged: false };
    expect(judgeCheckout(verdict(), clean)).toMatchObject({
      sync_required: true,
      reason: "catalog_mismatch",
    });
    const uncommitted = judgeCheckout(verdict({ commitsBehind: 30 }), {
      ...clean,
      catalogUncommitted: true,
    });
    expect(uncommitted).toMatchObject({
      sync_required: false,
      reason: "uncommitted_memory",
      required_action: "commit_memory",
    });
    expect(uncommitted.detail).toContain("git add memory MEMORY.md && git commit");
    expect(judgeCheckout(verdict(), { ...clean, mainMerged: true })).toMatchObject({
      sync_required: false,
      reason: null,
      required_action: null,
    });
    // Behind main is a sync, merged or not; a verdict in sync stays so, dirty or not.
    expect(
      judgeCheckout(verdict({ commitsBehind: 30 }), { ...clean, mainMerged: true }).reason,
    ).toBe("behind_main");
    const inSync = verdict({ mainCatalogHash: "sha256:here" });
    expect(judgeCheckout(inSync, { catalogUncommitted: true, mainMerged: false })).toEqual(inSync);
  });
});

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("worker check and worker sync in a checkout", () => {
  let repo: TempRepo;
  const director = (args: string[]) =>
    runBin(DIRECTOR_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir });
  const worker = (args: string[]) =>
    runBin(WORKER_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir });
  async function newMemory(text: string) {
    expect((await worker(["emit", "--kind", "lesson", "--text", text, "--topic", "t"])).code).toBe(
      0,
    );
    expect((await director(["run", "--flush"])).code).toBe(0);
  }
  const commit = (message: string) => {
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", message]);
  };

  beforeAll(async () => {
    assertBuilt();
    repo = dirs.repo();
    expect((await director(["init"])).code).toBe(0);
    writeFileSync(
      join(repo.dir, "config", "dev.toml"),
      "[memory]\nbuffer_keep_recent_events = 0\n",
    );
    commit("init");
  });

  it("passes a branch that merged main and committed memory of its own", async () => {
    git(repo.dir, ["checkout", "-q", "-b", "memory-branch"]);
    await newMemory("A lesson on the branch");
    commit("memory on the branch");
    const check = await worker(["check", "--json", "--main", "main"]);
    expect(check.code, check.stdout).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: true,
      sync_required: false,
      reason: null,
    });
    expect((await worker(["check", "--main", "main"])).stdout).toMatch(
      /in sync with main \(0 commit\(s\) behind\); this branch's memory .* reaches main/,
    );
    const sync = await worker(["sync", "--main", "main"]);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/^nothing to do: this branch's memory/);
    git(repo.dir, ["checkout", "-q", "main"]);
  });

  it("names uncommitted memory on a branch behind main; sync points to the commit, exit 3", async () => {
    git(repo.dir, ["checkout", "-q", "-b", "behind"]);
    git(repo.dir, ["checkout", "-q", "main"]);
    await newMemory("A lesson on main");
    commit("memory on main");
    git(repo.dir, ["checkout", "-q", "behind"]);
    await newMemory("A lesson run here, not committed");
    const check = await worker(["check", "--json"]);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: false,
      sync_required: false,
      reason: "uncommitted_memory",
      required_action: "commit_memory",
    });
    expect((await worker(["check"])).stdout).toContain(
      "memory not committed (uncommitted_memory): memory/catalog.json in the work tree is not the one committed at HEAD",
    );
    const sync = await worker(["sync"]);
    expect(sync.code).toBe(3);
    expect(sync.stderr).toContain("commit it: git add memory MEMORY.md && git commit");
    expect(sync.stdout).not.toContain("nothing to do");
    git(repo.dir, ["checkout", "-q", "-f", "main"]);
    git(repo.dir, ["clean", "-q", "-fd", "memory"]);
  });

  it("tries the merge, never 'nothing to do', when check asks for a sync of unrelated history", async () => {
    git(repo.dir, ["checkout", "-q", "--orphan", "stranger"]);
    await newMemory("A lesson of another history");
    commit("another history");
    const check = await worker(["check", "--json", "--main", "main"]);
    expect(JSON.parse(check.stdout)).toMatchObject({
      sync_required: true,
      reason: "catalog_mismatch",
      drift: { commits_behind: 0, main_ancestor_sha: null },
    });
    const sync = await worker(["sync", "--main", "main"]);
    expect(sync.stdout).not.toContain("nothing to do");
    expect(sync.code).toBe(3);
    expect(sync.stderr).toMatch(/merging main stopped.*Resolve by hand: git merge main/s);
  });
});
