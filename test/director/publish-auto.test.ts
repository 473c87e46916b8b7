/**
 * `memory.publish = "auto"` means pull requests when anything says so (the environment names
 * a GitHub repository or is GitHub Actions, a `run --pr` ran here, the engram branch exists),
 * and `director run --pr` never answers "nothing to propose" while the work tree holds memory
 * main lacks: it proposes that memory and says so. Through the bins, on fresh repositories,
 * each against a local GitHub-compatible server of its own.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { publishesByPullRequest } from "../../src/director/room.js";
import type { CatalogEntry } from "../../src/schema/engram.js";
import { type BinResult, describeResult, director, type Env, jsonOf } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import { FakeGitHub } from "../support/fake-github.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());
const TOKEN = "ghs_fakeTokenForThePublishTests0000000000";
const SMALL = "[memory]\nbuffer_keep_recent_events = 0\nbuffer_max_events = 400\n";

interface WorkTree {
  engrams: number;
  carried: number;
  rejected: number;
}
interface RunJson {
  buffer: { events: number };
  proposal: {
    status: string;
    head_sha: string | null;
    pr: { number: number } | null;
    work_tree: WorkTree | null;
  };
}

/** A fresh GitHub stand-in (no engram branch anywhere) for one test. */
async function withGitHub(test: (fake: FakeGitHub, env: Env) => Promise<void>): Promise<void> {
  const fake = new FakeGitHub({ dir: dirs.dir("engram-publish-github-"), token: TOKEN });
  const apiUrl = await fake.start();
  try {
    await test(fake, {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
      GITHUB_API_URL: apiUrl,
    });
    expect(fake.violations).toEqual([]);
  } finally {
    await fake.stop();
  }
}

/** A fresh clone: `director init` and the budgets committed on main, pushed to the fake. */
async function freshClone(fake: FakeGitHub, config: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-publish-");
  git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
  expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
  repo.writeConfig(config);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", "init"]);
  git(repo.dir, ["push", "-q", "origin", "main"]);
  return repo;
}

function factsFile(tag: string, count: number): { path: string; texts: string[] } {
  const texts = Array.from(
    { length: count },
    (_, i) => `${tag} fact ${String(i).padStart(4, "0")}`,
  );
  const lines = texts.map((text, i) =>
    note("fact", text, { eventId: `${tag}-${i}`, topics: [`t${i % 7}`], seq: i }),
  );
  const path = join(dirs.dir("engram-publish-input-"), "events.ndjson");
  writeFileSync(path, ndjson(lines));
  return { path, texts };
}

async function bin(repo: TempRepo, args: string[], env: Env): Promise<BinResult> {
  const r = await director(args, { cwd: repo.dir, env, timeoutMs: 90_000 });
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

function factsIn(read: (path: string) => string): string[] {
  const catalog = JSON.parse(read("memory/catalog.json")) as { entries: CatalogEntry[] };
  return catalog.entries.flatMap((e) => (JSON.parse(read(e.path)) as { facts: string[] }).facts);
}

const status = (repo: TempRepo) => git(repo.dir, ["--no-optional-locks", "status", "--porcelain"]);
/** No GitHub variable at all: what a developer's shell has. */
const BARE: Env = { GITHUB_REPOSITORY: undefined, GITHUB_ACTIONS: undefined };

describe('memory.publish = "auto"', () => {
  it("with GITHUB_REPOSITORY set, an ingest stages for run --pr, which proposes every compacted event", async () => {
    await withGitHub(async (fake, env) => {
      const repo = await freshClone(fake, SMALL);
      const { path, texts } = factsFile("env", 1500);
      await bin(repo, ["ingest", path, "--json"], {
        GITHUB_REPOSITORY: env.GITHUB_REPOSITORY,
        SOURCE_DATE_EPOCH: "1800000000",
      });
      // Pull requests: nothing was written to the work tree.
      expect(status(repo)).toBe("");
      const r = jsonOf<RunJson>(
        await bin(repo, ["run", "--pr", "--json"], { ...env, SOURCE_DATE_EPOCH: "1800000010" }),
      );
      expect(r.proposal.status).toBe("created");
      expect(r.proposal.pr).not.toBeNull();
      expect(r.proposal.work_tree).toBeNull();
      const head = r.proposal.head_sha as string;
      const onBranch = new Set(factsIn((p) => fake.git.git(["show", `${head}:${p}`])));
      // Every event not still in the buffer is on the branch.
      expect(onBranch.size).toBe(1500 - r.buffer.events);
      for (const text of onBranch) expect(texts).toContain(text);
      expect(status(repo)).toBe("");
    });
  });

  it("GITHUB_ACTIONS=true, the engram branch or github.repository each mean pull requests", async () => {
    const repo = dirs.repo("engram-publish-rules-");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    const ctx = await openContext({ repo: repo.dir });
    expect(await publishesByPullRequest(ctx, {})).toBe(false);
    expect(await publishesByPullRequest(ctx, { GITHUB_ACTIONS: "true" })).toBe(true);
    expect(await publishesByPullRequest(ctx, { GITHUB_REPOSITORY: "o/r" })).toBe(true);
    expect(await publishesByPullRequest(ctx, { GITHUB_REPOSITORY: "" })).toBe(false);
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "first"]);
    git(repo.dir, ["branch", "engram/memory"]);
    expect(await publishesByPullRequest(ctx, {})).toBe(true);
    repo.writeConfig('[github]\nrepository = "o/r"\n');
    git(repo.dir, ["branch", "-D", "engram/memory"]);
    expect(await publishesByPullRequest(await openContext({ repo: repo.dir }), {})).toBe(true);
  });
});

describe("run --pr and memory in the work tree", () => {
  it("with nothing set, proposes what the ingest wrote into the work tree, and says so", async () => {
    await withGitHub(async (fake, env) => {
      const repo = await freshClone(fake, SMALL);
      const { path } = factsFile("bare", 1500);
      await bin(repo, ["ingest", path, "--json"], { ...BARE, SOURCE_DATE_EPOCH: "1800000000" });
      // Nothing said pull requests: auto chose the work tree.
      expect(status(repo)).not.toBe("");
      const inTree = factsIn((p) => readFileSync(join(repo.dir, p), "utf8"));
      expect(inTree.length).toBeGreaterThan(1000);
      const view = status(repo);

      const planned = await bin(repo, ["run", "--pr", "--dry-run"], {
        ...env,
        SOURCE_DATE_EPOCH: "1800000010",
      });
      expect(planned.stdout).toMatch(/a run without --dry-run carries \d+ of them/);
      expect(fake.branchSha("engram/memory")).toBeNull();

      const r = await bin(repo, ["run", "--pr"], { ...env, SOURCE_DATE_EPOCH: "1800000010" });
      expect(r.stdout).toMatch(/^proposal: created;/m);
      expect(r.stdout).toMatch(/the work tree holds \d+ engram\(s\) a cycle wrote there/);
      expect(r.stdout).toMatch(/carried \d+ of them into this proposal/);
      expect(r.stdout).toMatch(/git restore memory MEMORY\.md; git clean -fd memory/);
      const head = fake.branchSha("engram/memory") as string;
      const onBranch = new Set(factsIn((p) => fake.git.git(["show", `${head}:${p}`])));
      for (const text of inTree) expect(onBranch.has(text), text).toBe(true);
      // The work tree and index are only read.
      expect(status(repo)).toBe(view);

      const again = jsonOf<RunJson>(
        await bin(repo, ["run", "--pr", "--json"], { ...env, SOURCE_DATE_EPOCH: "1800000020" }),
      );
      expect(again.proposal.status).toBe("unchanged");
      expect(again.proposal.work_tree?.carried).toBe(0);
      expect(again.proposal.work_tree?.engrams).toBeGreaterThan(0);
    });
  });

  it("proposes what a work-tree cycle compacted (publish = work-tree, director run)", async () => {
    await withGitHub(async (fake, env) => {
      const repo = await freshClone(fake, `${SMALL}publish = "work-tree"\n`);
      const { path } = factsFile("cycle", 300);
      await bin(repo, ["ingest", path], { ...BARE, SOURCE_DATE_EPOCH: "1800000000" });
      await bin(repo, ["run", "--flush"], { ...BARE, SOURCE_DATE_EPOCH: "1800000005" });
      const inTree = factsIn((p) => readFileSync(join(repo.dir, p), "utf8"));
      expect(inTree.length).toBe(300);

      const r = jsonOf<RunJson>(
        await bin(repo, ["run", "--pr", "--json"], { ...env, SOURCE_DATE_EPOCH: "1800000010" }),
      );
      expect(r.proposal.status).toBe("created");
      expect(r.proposal.work_tree?.carried).toBe(r.proposal.work_tree?.engrams);
      const head = r.proposal.head_sha as string;
      const onBranch = new Set(factsIn((p) => fake.git.git(["show", `${head}:${p}`])));
      expect(onBranch).toEqual(new Set(inTree));
    });
  });
});
