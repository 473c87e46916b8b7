import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  director,
  jsonOf,
  worker,
} from "../support/bins.js";
import { listFiles } from "../support/memory.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

interface Entry {
  version: number;
  catalog_hash: string;
  created_at: string;
  made_by: { kind: string; session_id?: string; target?: number };
  counts: { engrams: number; episodes: number; facts: number; state: number; core: number };
  tag: string | null;
  snapshot: string | null;
  commit: string | null;
}

const epoch = (n: number) => ({ SOURCE_DATE_EPOCH: String(1_790_000_000 + n * 100) });

async function ok(r: Promise<BinResult>): Promise<BinResult> {
  const done = await r;
  expect(done.code, describeResult(done)).toBe(0);
  return done;
}

/** One cycle that compacts `facts` into a new version, at a fixed time. */
async function version(repo: TempRepo, n: number, facts: string[]): Promise<void> {
  for (const text of facts) {
    await ok(worker(["emit", "--kind", "fact", "--text", text], { cwd: repo.dir, env: epoch(n) }));
  }
  await ok(director(["run", "--flush"], { cwd: repo.dir, env: epoch(n) }));
}

async function history(repo: TempRepo): Promise<Entry[]> {
  return jsonOf<{ versions: Entry[] }>(await director(["history", "--json"], { cwd: repo.dir }))
    .versions;
}

async function initialized(): Promise<TempRepo> {
  const repo = temps.repo();
  await ok(director(["init"], { cwd: repo.dir }));
  return repo;
}

describe("versions of durable memory (embedded default, no remote)", () => {
  it("logs every new catalog version, tags its snapshot, and lists them newest first", async () => {
    const repo = await initialized();
    await version(repo, 1, ["deploys use blue-green"]);
    await version(repo, 2, ["the cache key includes the lockfile hash"]);
    const log = readFileSync(repo.path("memory/versions.ndjson"), "utf8").trim().split("\n");
    expect(log.map((l) => JSON.parse(l).version)).toEqual([1, 2]);

    const h = await history(repo);
    expect(h.map((v) => v.version)).toEqual([2, 1]);
    expect(h[0]).toMatchObject({ made_by: { kind: "cycle" }, tag: "engram/v2" });
    expect(h[0]?.counts).toEqual({ engrams: 2, episodes: 0, facts: 0, state: 0, core: 0 });
    expect(h[1]?.created_at).toBe(new Date(1_790_000_100 * 1000).toISOString());
    // The snapshot holds memory at the version, parented on the previous one.
    const v2 = h[0]?.snapshot as string;
    expect(git(repo.dir, ["rev-parse", `${v2}^`]).trim()).toBe(h[1]?.snapshot);
    const listed = git(repo.dir, ["ls-tree", "-r", "--name-only", v2]).split("\n");
    expect(listed).toContain("memory/catalog.json");
    expect(listed).toContain("MEMORY.md");
    expect(listed).toContain("memory/versions.ndjson");
    const catalog = JSON.parse(git(repo.dir, ["show", `${v2}:memory/catalog.json`]));
    expect(catalog.hash).toBe(h[0]?.catalog_hash);

    // Made from v1's snapshot plus the cycle's changes, it holds exactly the work tree's memory.
    const onDisk = listFiles(repo.path("memory"), repo.dir).concat("MEMORY.md").sort();
    expect(listed.filter(Boolean).sort()).toEqual(onDisk);
    for (const path of onDisk) {
      expect(git(repo.dir, ["show", `${v2}:${path}`]), path).toBe(
        readFileSync(repo.path(path), "utf8"),
      );
    }

    // Survives a restart: another process reads the same history.
    expect(await history(repo)).toEqual(h);
    await ok(director(["verify"], { cwd: repo.dir }));
  });

  it("gives the same version the same snapshot commit on another machine", async () => {
    const [a, b] = [await initialized(), await initialized()];
    for (const repo of [a, b]) await version(repo, 1, ["same input, same commit"]);
    const [ha, hb] = [await history(a), await history(b)];
    expect(ha[0]?.snapshot).toMatch(/^[0-9a-f]{40}$/);
    expect(hb[0]?.snapshot).toBe(ha[0]?.snapshot);
  });

  it("verify names the file and line when the last version does not match the catalog", async () => {
    const repo = await initialized();
    await version(repo, 1, ["a first fact"]);
    await version(repo, 2, ["a second fact"]);
    const path = repo.path("memory/versions.ndjson");
    const lines = readFileSync(path, "utf8").trim().split("\n");
    writeFileSync(path, `${lines[0]}\n`);
    const r = await director(["verify"], { cwd: repo.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /memory\/versions\.ndjson:1: last version 1 differs from the catalog's catalog_version 2/,
    );
  });

  it("diff shows engrams, facts and state keys with old and new values", async () => {
    const repo = await initialized();
    repo.write("memory/state/build.json", '{"key":"build","value":{"green":false}}\n');
    await version(repo, 1, ["builds run on arm64"]);
    repo.write("memory/state/build.json", '{"key":"build","value":{"green":true}}\n');
    repo.write("memory/core/team.json", '{"key":"team","value":"platform"}\n');
    await version(repo, 2, ["releases ship on tuesdays"]);
    const d = jsonOf<{
      engrams: { added: { path: string }[]; removed: unknown[] };
      facts: { added: string[]; removed: string[] };
      state: unknown[];
      core: unknown[];
    }>(await director(["diff", "1", "2", "--json"], { cwd: repo.dir }));
    expect(d.engrams.added).toHaveLength(1);
    expect(d.engrams.removed).toEqual([]);
    expect(d.facts.added).toEqual(["releases ship on tuesdays"]);
    expect(d.state).toEqual([
      { key: "build", change: "changed", old: { green: false }, new: { green: true } },
    ]);
    expect(d.core).toEqual([{ key: "team", change: "added", new: "platform" }]);
    const text = await ok(director(["diff", "v2", "v1"], { cwd: repo.dir }));
    expect(text.stdout).toContain('~ state build: {"green":true} -> {"green":false}');
    expect(text.stdout).toContain('- core team (was "platform")');
  });

  it("rollback makes a new version equal to N, and refuses an unknown version", async () => {
    const repo = await initialized();
    await version(repo, 1, ["kept fact"]);
    await version(repo, 2, ["later fact"]);
    const before = await history(repo);
    const r = await ok(director(["rollback", "1", "--json"], { cwd: repo.dir, env: epoch(3) }));
    expect(JSON.parse(r.stdout)).toMatchObject({ target: 1, engrams_removed: 1 });
    const h = await history(repo);
    expect(h.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(h[0]?.made_by).toEqual({ kind: "rollback", target: 1 });
    // History is kept: versions 1 and 2 are as they were.
    expect(h.slice(1)).toEqual(before);
    const d = jsonOf<{ engrams: { added: unknown[]; removed: unknown[] }; files: unknown }>(
      await director(["diff", "1", "3", "--json"], { cwd: repo.dir }),
    );
    expect(d.engrams).toEqual({ added: [], removed: [] });
    await ok(director(["verify"], { cwd: repo.dir }));

    const bad = await director(["rollback", "9"], { cwd: repo.dir });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/version 9: unknown; logged versions: 1 to 3/);
  });

  it("rollback --pr proposes the version on the engram branch, leaving the work tree alone", async () => {
    const repo = await initialized();
    await version(repo, 1, ["first"]);
    await version(repo, 2, ["second"]);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "memory v2"]);
    const catalog = readFileSync(repo.path("memory/catalog.json"), "utf8");
    const r = await ok(director(["rollback", "1", "--pr", "--json"], { cwd: repo.dir }));
    expect(JSON.parse(r.stdout).proposal.status).toBe("created");
    expect(readFileSync(repo.path("memory/catalog.json"), "utf8")).toBe(catalog);
    const log = git(repo.dir, ["show", "engram/memory:memory/versions.ndjson"]).trim().split("\n");
    expect(JSON.parse(log.at(-1) as string)).toMatchObject({
      version: 3,
      made_by: { kind: "rollback", target: 1 },
    });
    // Merged, main carries version 3 and history names the commit that brought it.
    git(repo.dir, ["merge", "-q", "--no-ff", "-m", "merge memory", "engram/memory"]);
    const h = await history(repo);
    expect(h[0]).toMatchObject({ version: 3, tag: "engram/v3" });
    expect(h[0]?.commit).toBe(git(repo.dir, ["rev-parse", "HEAD"]).trim());
    expect(h[1]?.commit).toBe(git(repo.dir, ["rev-parse", "HEAD^"]).trim());
  });
});

describe("reads inside a session", () => {
  it("see the session's parent version after main has moved on", async () => {
    const repo = await initialized();
    await version(repo, 1, ["the parent knows about postgres"]);
    const start = jsonOf<{ session_id: string; parent_version: number }>(
      await worker(["session", "start", "--json"], { cwd: repo.dir }),
    );
    expect(start.parent_version).toBe(1);
    await version(repo, 2, ["main later learns about redis"]);
    const recall = async (query: string, session: boolean) =>
      jsonOf<{ path: string; text: string }[]>(
        await worker(
          [
            "recall",
            query,
            "--no-signal",
            "--json",
            "--scope",
            "st,lt",
            ...(session ? ["--session", start.session_id] : []),
          ],
          { cwd: repo.dir },
        ),
      );
    expect(await recall("redis", false)).toHaveLength(1);
    expect(await recall("redis", true)).toEqual([]);
    expect((await recall("postgres", true))[0]?.text).toContain("postgres");

    const unknown = await worker(["recall", "x", "--session", "s_0000000000000000"], {
      cwd: repo.dir,
    });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/session s_0000000000000000 is unknown/);
  });
});

describe("version tags with a remote (director run --pr)", () => {
  it("are rebuilt after a merge on a fresh clone, identical, and pushed", async () => {
    const remote = temps.dir("engram-remote-");
    git(remote, ["init", "-q", "--bare", "-b", "main"]);
    const a = await initialized();
    git(a.dir, ["add", "-A"]);
    git(a.dir, ["commit", "-qm", "init"]);
    git(a.dir, ["remote", "add", "origin", remote]);
    git(a.dir, ["push", "-q", "origin", "main"]);
    await ok(
      worker(["emit", "--kind", "fact", "--text", "tags travel after merge"], { cwd: a.dir }),
    );
    const run = await ok(
      director(["run", "--pr", "--flush", "--json"], { cwd: a.dir, env: epoch(1) }),
    );
    expect(JSON.parse(run.stdout).proposal.status).toBe("created");
    const proposed = git(a.dir, ["rev-parse", "refs/tags/engram/v1"]).trim();
    // Not merged yet: the tag stays local.
    expect(git(remote, ["tag", "-l"]).trim()).toBe("");

    // A reviewer merges the pull request elsewhere.
    const reviewer = temps.dir("engram-reviewer-");
    git(reviewer, ["clone", "-q", remote, "."]);
    git(reviewer, ["merge", "-q", "--no-ff", "-m", "merge memory", "origin/engram/memory"]);
    git(reviewer, ["push", "-q", "origin", "main"]);

    // A fresh runner has no tags: its next run rebuilds v1 from main and pushes it.
    const runner = temps.dir("engram-runner-");
    git(runner, ["clone", "-q", remote, "."]);
    await ok(director(["run", "--pr", "--json"], { cwd: runner }));
    expect(git(runner, ["rev-parse", "refs/tags/engram/v1"]).trim()).toBe(proposed);
    expect(git(remote, ["rev-parse", "refs/tags/engram/v1"]).trim()).toBe(proposed);
    const h = jsonOf<{ versions: Entry[] }>(
      await director(["history", "--json", "--main", "origin/main"], { cwd: runner }),
    ).versions;
    expect(h[0]).toMatchObject({ version: 1, tag: "engram/v1", snapshot: proposed });
    expect(h[0]?.commit).toBe(git(runner, ["rev-parse", "origin/main"]).trim());
  });
});
