/**
 * `director restore`: an engram evicted by a tight budget comes back from git history, byte
 * for byte, in a new catalog version.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { restoreEngram } from "../../src/director/restore.js";
import { runCycle } from "../../src/director/run.js";
import { verifyRepository } from "../../src/director/verify.js";
import { describeResult, runDirector as director } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import { readCatalogFile } from "../support/memory.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const config = (stMaxFiles: number) =>
  `[memory]\nbuffer_keep_recent_events = 0\nst_max_files = ${stMaxFiles}\n`;

/** A repository whose first engram was evicted (and committed so) by `st_max_files = 1`. */
let template: TempRepo;
let evictedId: string;
let evictedPath: string;
let evictedAt: string;
let lastHeldAt: string;

function commitAll(repo: TempRepo, message: string): string {
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", message]);
  return git(repo.dir, ["rev-parse", "HEAD"]).trim();
}

async function cycle(repo: TempRepo, epoch: number, topic?: string): Promise<string[]> {
  process.env.SOURCE_DATE_EPOCH = String(epoch);
  try {
    const ctx = await openContext({ repo: repo.dir });
    if (topic !== undefined) {
      const facts = [`${topic} uses small files`, `${topic} is reviewed in pull requests`];
      const file = repo.write(
        `.engram/in-${epoch}.ndjson`,
        ndjson(facts.map((t, i) => note("fact", t, { eventId: `${topic}-${i}`, topics: [topic] }))),
      );
      await ingestSource(ctx, { path: file });
    }
    const r = await runCycle(ctx, { force: true });
    return topic === undefined ? r.evicted : r.written;
  } finally {
    delete process.env.SOURCE_DATE_EPOCH;
  }
}

beforeAll(async () => {
  template = dirs.repo("engram-restore-");
  template.writeConfig(config(10));
  initRepository(await openContext({ repo: template.dir }));
  commitAll(template, "init");
  [evictedPath] = (await cycle(template, 1795000000, "alpha")) as [string];
  evictedAt = commitAll(template, "memory: alpha");
  await cycle(template, 1795003600, "beta");
  lastHeldAt = commitAll(template, "memory: beta");
  template.writeConfig(config(1));
  const evicted = await cycle(template, 1795007200);
  expect(evicted).toEqual([evictedPath]);
  commitAll(template, "memory: evict");
  evictedId = /engram_(e_[0-9a-f]{32})\.json$/.exec(evictedPath)?.[1] as string;
});

describe("director restore", () => {
  it("brings an evicted engram back byte for byte in a new catalog version", async () => {
    const repo = dirs.copy(template);
    repo.writeConfig(config(2));
    const before = readCatalogFile(repo.dir);
    expect(existsSync(repo.path(evictedPath))).toBe(false);

    const r = await restoreEngram(await openContext({ repo: repo.dir }), evictedId);
    expect(r).toMatchObject({
      engram_id: evictedId,
      restored: true,
      path: evictedPath,
      commit: expect.any(String),
      catalog_version: before.catalog_version + 1,
      over_budget: [],
    });
    // Found in the newest commit that still had it: the one before the eviction.
    expect(r.commit).toBe(lastHeldAt);
    const original = git(repo.dir, ["show", `${evictedAt}:${evictedPath}`]);
    expect(readFileSync(repo.path(evictedPath), "utf8")).toBe(original);
    const after = readCatalogFile(repo.dir);
    expect(after.catalog_version).toBe(before.catalog_version + 1);
    expect(after.entries.map((e) => e.engram_id)).toContain(evictedId);
    expect(readFileSync(repo.path("MEMORY.md"), "utf8")).toContain(after.hash);
    expect(await verifyRepository(await openContext({ repo: repo.dir }))).toEqual([]);
    // The restore is a version of its own, logged and tagged with the catalog.
    const log = readFileSync(repo.path("memory/versions.ndjson"), "utf8").trim().split("\n");
    expect(JSON.parse(log.at(-1) as string)).toMatchObject({
      version: after.catalog_version,
      catalog_hash: after.hash,
      made_by: { kind: "restore" },
    });
    const tagged = git(repo.dir, ["show", `engram/v${after.catalog_version}:memory/catalog.json`]);
    expect(JSON.parse(tagged).hash).toBe(after.hash);

    const again = await restoreEngram(await openContext({ repo: repo.dir }), evictedId);
    expect(again).toMatchObject({ restored: false, commit: null, path: evictedPath });
    expect(readCatalogFile(repo.dir).catalog_version).toBe(after.catalog_version);
  });

  it("says when a restore puts a tier over budget (bin)", async () => {
    const repo = dirs.copy(template);
    const r = await director(["restore", evictedId], { cwd: repo.dir });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`restored ${evictedPath} from commit `);
    expect(r.stdout).toContain(
      "warning: memory/st is over its budget (2 files > st_max_files 1): ",
    );
    expect(r.stdout).toContain("the next director run evicts oldest-first again");
    const json = await director(["restore", evictedId, "--json"], { cwd: repo.dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ restored: false, engram_id: evictedId });
  });

  it("exits 3 naming an id that history does not hold, 2 for a malformed id", async () => {
    const repo = dirs.copy(template);
    const unknown = `e_${"0".repeat(32)}`;
    const r = await director(["restore", unknown], { cwd: repo.dir });
    expect(r.code, describeResult(r)).toBe(3);
    expect(r.stderr).toContain(`${unknown}: no engram with this id in the history of HEAD`);
    const bad = await director(["restore", "e_nothex"], { cwd: repo.dir });
    expect(bad.code, describeResult(bad)).toBe(2);
  });

  it("skips a damaged copy and names it when no intact one exists", async () => {
    const repo = dirs.copy(template);
    const fake = `e_${"f".repeat(32)}`;
    repo.write(`memory/st/20260101-000000Z/engram_${fake}.json`, "{}\n");
    commitAll(repo, "a stray file");
    await expect(restoreEngram(await openContext({ repo: repo.dir }), fake)).rejects.toThrow(
      /only damaged copies were found \(memory\/st\/20260101-000000Z\//,
    );
  });
});
