import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeDrift } from "../../src/core/swarm/drift.js";
import { Envelope } from "../../src/schema/envelope.js";
import { assertBuilt, DIRECTOR_BIN, runBin, WORKER_BIN } from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const policy = {
  max_commits_behind: 20,
  max_seconds_behind: 86_400,
  require_catalog_hash_match: true,
  required_action: "merge_main" as const,
};
const drift = (over: Partial<Parameters<typeof judgeDrift>[0]> = {}) =>
  judgeDrift({
    mainSha: "a".repeat(40),
    mainTime: 1_000_000,
    mergeBaseTime: 1_000_000,
    commitsBehind: 0,
    localCatalogHash: "sha256:same",
    mainCatalogHash: "sha256:same",
    policy,
    ...over,
  });

describe("judgeDrift", () => {
  it("is in sync at main, behind past either limit, and mismatched on another catalog", () => {
    expect(drift()).toMatchObject({ sync_required: false, reason: null, required_action: null });
    expect(drift({ commitsBehind: 21 })).toMatchObject({
      sync_required: true,
      reason: "behind_main",
      required_action: "merge_main",
    });
    expect(drift({ mergeBaseTime: 1_000_000 - 86_401 })).toMatchObject({
      reason: "behind_main",
      seconds_behind: 86_401,
    });
    expect(drift({ mainCatalogHash: "sha256:other" })).toMatchObject({
      reason: "catalog_mismatch",
      catalog_hash_expected: "sha256:other",
    });
    expect(
      drift({
        mainCatalogHash: "sha256:other",
        policy: { ...policy, require_catalog_hash_match: false },
      }).sync_required,
    ).toBe(false);
    // Behind wins over a mismatch: merging main fixes both.
    expect(drift({ commitsBehind: 30, mainCatalogHash: "sha256:other" }).reason).toBe(
      "behind_main",
    );
  });
});

const dirs = new TempDirs();
let repo: TempRepo;
afterAll(() => dirs.cleanup());

async function director(args: string[]) {
  return runBin(DIRECTOR_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir });
}
async function worker(args: string[]) {
  return runBin(WORKER_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir });
}
async function remember(text: string) {
  expect(
    (await worker(["emit", "--kind", "lesson", "--text", text, "--topic", "drift"])).code,
  ).toBe(0);
  expect((await director(["run", "--force"])).code).toBe(0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", `memory: ${text}`]);
}

describe("worker check and worker heartbeat against main", () => {
  beforeAll(async () => {
    assertBuilt();
    repo = dirs.repo();
    expect((await director(["init"])).code).toBe(0);
    writeFileSync(
      join(repo.dir, "config", "dev.toml"),
      "[memory]\nbuffer_keep_recent_events = 0\n",
    );
    await remember("First lesson");
  });

  it("is in sync on a fresh branch, then sees main's memory move on, and is in sync again after a merge", async () => {
    const base = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    git(repo.dir, ["checkout", "-q", "-b", "feature"]);
    let check = await worker(["check", "--json"]);
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: true,
      sync_required: false,
      drift: { main_ref: "main", commits_behind: 0 },
    });

    git(repo.dir, ["checkout", "-q", "main"]);
    await remember("Second lesson");
    const mainSha = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    git(repo.dir, ["checkout", "-q", "feature"]);

    check = await worker(["check", "--json"]);
    expect(check.code).toBe(1);
    const verdict = JSON.parse(check.stdout);
    expect(verdict).toMatchObject({
      ok: false,
      sync_required: true,
      reason: "catalog_mismatch",
      required_action: "merge_main",
      drift: { main_sha_expected: mainSha, commits_behind: 1, main_ancestor_sha: base },
    });
    expect((await worker(["check"])).stdout).toMatch(/sync required \(catalog_mismatch\)/);

    const beat = await worker([
      "heartbeat",
      "--stage",
      "test",
      "--issue",
      "7",
      "--progress",
      "0.5",
      "--json",
    ]);
    expect(beat.code).toBe(0);
    expect(JSON.parse(beat.stdout)).toMatchObject({ spooled: true, main_ancestor_sha: base });

    writeFileSync(
      join(repo.dir, "config", "dev.toml"),
      "[memory]\nbuffer_keep_recent_events = 0\n[policy.sync_main]\nmax_commits_behind = 0\n",
    );
    expect(JSON.parse((await worker(["check", "--json"])).stdout).reason).toBe("behind_main");

    git(repo.dir, ["checkout", "-q", "--", "config"]);
    git(repo.dir, ["merge", "-q", "--no-edit", "main"]);
    check = await worker(["check", "--json"]);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, sync_required: false });
  });

  it("says so when there is no main to compare with", async () => {
    // A repository with no commits yet (commands need a git work tree laid out by init).
    const lone = dirs.repo().dir;
    expect((await runBin(DIRECTOR_BIN, ["init"], { cwd: lone })).code).toBe(0);
    const r = await runBin(WORKER_BIN, ["check", "--json", "--repo", lone], { cwd: lone });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, sync_required: false, drift: null });
  });
});

describe("worker sync", () => {
  let origin: string;
  let clone: TempRepo;

  beforeAll(async () => {
    repo = dirs.repo();
    expect((await director(["init"])).code).toBe(0);
    writeFileSync(
      join(repo.dir, "config", "dev.toml"),
      "[memory]\nbuffer_keep_recent_events = 0\n",
    );
    await remember("Lesson before the branch");
    origin = dirs.dir("engram-origin-");
    git(origin, ["init", "-q", "--bare", "-b", "main"]);
    git(repo.dir, ["remote", "add", "origin", origin]);
    git(repo.dir, ["push", "-q", "origin", "main"]);
    clone = dirs.repo("engram-worker-");
    git(clone.dir, ["remote", "add", "origin", origin]);
    git(clone.dir, ["fetch", "-q", "origin"]);
    git(clone.dir, ["checkout", "-q", "-b", "feature", "origin/main"]);
    clone.write("src/feature.ts", "export const feature = 1;\n");
    git(clone.dir, ["add", "-A"]);
    git(clone.dir, ["commit", "-q", "-m", "feature work"]);
  });

  const sync = (args: string[] = []) =>
    runBin(WORKER_BIN, ["sync", "--json", ...args], { cwd: clone.dir });

  it("does nothing while in sync", async () => {
    const r = await sync();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ synced: false, fetched: true });
  });

  it("fetches main, merges it when the policy requires, and reports the memory it brought", async () => {
    await remember("Lesson merged while the worker worked");
    git(repo.dir, ["push", "-q", "origin", "main"]);
    // Offline, the worker's old view of main is all it has; online, check fetches first.
    const offline = await runBin(WORKER_BIN, ["check", "--json", "--offline"], {
      cwd: clone.dir,
    });
    expect(JSON.parse(offline.stdout)).toMatchObject({ fetched: false, sync_required: false });
    const check = await runBin(WORKER_BIN, ["check", "--json"], { cwd: clone.dir });
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ fetched: true, sync_required: true });

    clone.write("src/feature.ts", "export const feature = 2;\n");
    const refused = await sync();
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/uncommitted changes/);
    git(clone.dir, ["checkout", "-q", "--", "src"]);

    const r = await sync();
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({
      synced: true,
      action: "merge_main",
      reason: "catalog_mismatch",
      fetched: true,
      focus_changed: true,
    });
    expect(result.after.catalog_version).toBeGreaterThan(result.before.catalog_version);
    expect(result.engrams_added.length).toBeGreaterThan(0);
    const after = await runBin(WORKER_BIN, ["check", "--json"], { cwd: clone.dir });
    expect(JSON.parse(after.stdout)).toMatchObject({ ok: true, sync_required: false });
  });

  it("rebases instead when the policy says rebase_main", async () => {
    await remember("Lesson for the rebase");
    git(repo.dir, ["push", "-q", "origin", "main"]);
    const r = await sync(["--action", "rebase"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ synced: true, action: "rebase_main" });
    // Rebased: main is an ancestor and the branch's own commits sit on top of it.
    git(clone.dir, ["merge-base", "--is-ancestor", "origin/main", "HEAD"]);
    expect(git(clone.dir, ["log", "-1", "--format=%s", "HEAD"]).trim()).not.toMatch(/^Merge/);
    const bad = await sync(["--action", "squash"]);
    expect(bad.code).toBe(2);
  });
});

describe("director status judges each worker's drift from its heartbeats", () => {
  it("flags a worker behind main and emits a project_state_snapshot.v1", async () => {
    repo = dirs.repo();
    expect((await director(["init"])).code).toBe(0);
    writeFileSync(
      join(repo.dir, "config", "dev.toml"),
      "[memory]\nbuffer_keep_recent_events = 0\n[policy.sync_main]\nmax_commits_behind = 1\nrequire_catalog_hash_match = false\n",
    );
    await remember("Lesson one");
    git(repo.dir, ["branch", "old"]);
    await remember("Lesson two");
    await remember("Lesson three");
    // Two workers report: one from the old branch, one from main.
    git(repo.dir, ["checkout", "-q", "old"]);
    expect((await worker(["heartbeat", "--worker", "w-old", "--stage", "code"])).code).toBe(0);
    git(repo.dir, ["checkout", "-q", "main"]);
    expect((await worker(["heartbeat", "--worker", "w-new", "--stage", "test"])).code).toBe(0);
    expect((await director(["run"])).code).toBe(0);

    const status = JSON.parse((await director(["status", "--json"])).stdout);
    const byId = Object.fromEntries(
      status.swarm.workers.map((w: { worker: string }) => [w.worker, w]),
    );
    expect(byId["w-old"].drift).toMatchObject({
      sync_required: true,
      reason: "behind_main",
      required_action: "merge_main",
      commits_behind: 2,
    });
    expect(byId["w-new"].drift).toMatchObject({ sync_required: false, commits_behind: 0 });
    expect((await director(["status"])).stdout).toMatch(
      /w-old: .*must sync \(behind_main: merge_main\)/,
    );

    const snapshot = await director(["status", "--snapshot"]);
    const lines = snapshot.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const envelope = JSON.parse(lines[0] as string);
    expect(Envelope.safeParse(envelope).success).toBe(true);
    expect(envelope).toMatchObject({
      message_type: "project_state_snapshot.v1",
      sender: { role: "director" },
      payload: { main: { ref: "main" }, catalog: { version: status.catalog.version } },
    });
    // The two that beat, and the one whose lessons `remember` emitted: compacted, still known.
    const ids = envelope.payload.workers.map((w: { worker_id: string }) => w.worker_id);
    expect(ids).toEqual(expect.arrayContaining(["w-old", "w-new"]));
    expect(ids).toHaveLength(3);
  });
});
