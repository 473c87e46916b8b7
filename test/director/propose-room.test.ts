/**
 * Compaction for room (an ingest past the buffer's hard budgets) in a repository that
 * publishes memory by pull request: what the ingest compacts waits in the state folder for
 * the next `director run --pr`, never in the user's work tree or index. Through the bins, on
 * real repositories, against the local GitHub-compatible server.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { CatalogEntry } from "../../src/schema/engram.js";
import { type BinResult, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import type { FakeGitHub } from "../support/fake-github.js";
import { useFakeGitHub } from "../support/fake-github-hooks.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const TOKEN = "ghs_fakeTokenForTheRoomTests000000000000";
const BRANCH = "engram/memory";
const github = useFakeGitHub(dirs, TOKEN, "engram-room-github-");
let fake: FakeGitHub;
beforeAll(() => {
  ({ fake } = github);
});

/** Small budgets: 1,500 events pass the 400-event budget several times. */
const SMALL = "[memory]\nbuffer_keep_recent_events = 0\nbuffer_max_events = 400\n";

interface RoomReport {
  compactions: number;
  events: number;
  engrams: number;
  written_by_ingest: number;
}
interface RunJson {
  engrams_written: number;
  compacted_events: number;
  compacted_for_room: RoomReport | null;
  proposal?: { status: string; head_sha: string | null; pr: { number: number } | null };
}

const env = (epoch: number) => ({
  GITHUB_TOKEN: TOKEN,
  GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
  GITHUB_API_URL: github.apiUrl,
  SOURCE_DATE_EPOCH: String(epoch),
});

/** A Director clone whose origin is the fake's bare repository (main initialized there). */
async function directorClone(config: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-room-");
  git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
  if (fake.branchSha("main") === null) {
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    git(repo.dir, ["push", "-q", "origin", "main"]);
  } else {
    git(repo.dir, ["fetch", "-q", "origin"]);
    git(repo.dir, ["checkout", "-q", "-B", "main", "origin/main"]);
  }
  // The budgets are the clone's own, committed, so that the work tree starts clean.
  repo.writeConfig(config);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "budgets"]);
  return repo;
}

/** `count` distinct facts as an NDJSON file outside the repository. */
function factsFile(tag: string, count: number): { path: string; texts: string[] } {
  const texts = Array.from(
    { length: count },
    (_, i) => `${tag} fact ${String(i).padStart(4, "0")}`,
  );
  const lines = texts.map((text, i) =>
    note("fact", text, { eventId: `${tag}-${i}`, topics: [`t${i % 7}`], seq: i }),
  );
  const path = join(dirs.dir("engram-room-input-"), "events.ndjson");
  writeFileSync(path, ndjson(lines));
  return { path, texts };
}

async function ingest(repo: TempRepo, path: string, epoch: number): Promise<BinResult> {
  const r = await director(["ingest", path, "--json"], {
    cwd: repo.dir,
    env: { SOURCE_DATE_EPOCH: String(epoch) },
    timeoutMs: 90_000,
  });
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

async function run(repo: TempRepo, args: string[], epoch: number): Promise<RunJson> {
  const r = await director(["run", ...args, "--json"], {
    cwd: repo.dir,
    env: env(epoch),
    timeoutMs: 90_000,
  });
  expect(r.code, describeResult(r)).toBe(0);
  return jsonOf<RunJson>(r);
}

/** Every fact of every engram a tree lists (`ref` in `dir`'s git, or the work tree). */
function factsIn(read: (path: string) => string): string[] {
  const catalog = JSON.parse(read("memory/catalog.json")) as { entries: CatalogEntry[] };
  return catalog.entries.flatMap((e) => (JSON.parse(read(e.path)) as { facts: string[] }).facts);
}

/** The index and work tree as git sees them: any write to either changes this. */
function gitView(repo: TempRepo): string {
  // Read before git runs: `--no-optional-locks` keeps status from refreshing the index.
  const index = readFileSync(join(repo.dir, ".git", "index")).toString("base64");
  return [
    index,
    git(repo.dir, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]),
    git(repo.dir, ["ls-files", "--stage", "--debug"]),
  ].join("\n");
}

describe("compaction for room when memory is published by pull request", () => {
  it("stages what ingest compacts for the next run --pr: the PR holds every event, the work tree and index are untouched", async () => {
    const repo = await directorClone(`${SMALL}publish = "pull-request"\n`);
    const before = gitView(repo);
    expect(git(repo.dir, ["--no-optional-locks", "status", "--porcelain"])).toBe("");

    const { path, texts } = factsFile("pr", 1500);
    const ingested = jsonOf<{ accepted: number; compacted_for_room: RoomReport }>(
      await ingest(repo, path, 1_800_000_000),
    );
    expect(ingested.accepted).toBe(1500);
    // The budget held: all but at most 400 events were compacted for room.
    expect(ingested.compacted_for_room.events).toBeGreaterThanOrEqual(1100);
    expect(ingested.compacted_for_room.written_by_ingest).toBe(0);
    // Nothing in the work tree or the index changed: the compacted events wait in .engram/.
    expect(gitView(repo)).toBe(before);

    const r = await run(repo, ["--pr", "--force"], 1_800_000_010);
    expect(r.proposal?.status).toBe("created");
    expect(r.proposal?.pr).not.toBeNull();
    // The JSON says what the ingest compacted for room and what the cycle compacted.
    const room = r.compacted_for_room as RoomReport;
    expect(room.compactions).toBeGreaterThan(1);
    expect(room.events + r.compacted_events).toBe(1500);
    expect(room.written_by_ingest).toBe(0);
    expect(r.engrams_written).toBeGreaterThanOrEqual(room.engrams);
    // The pull request holds every event: each fact is in an engram on its head.
    const head = r.proposal?.head_sha as string;
    expect(fake.pull(r.proposal?.pr?.number as number)?.head).toBe(BRANCH);
    const onBranch = factsIn((p) => fake.git.git(["show", `${head}:${p}`]));
    expect(new Set(onBranch)).toEqual(new Set(texts));
    expect(gitView(repo)).toBe(before);

    // The ledger was reported once: the next run has nothing compacted for room to report.
    const again = await run(repo, ["--pr", "--force"], 1_800_000_020);
    expect(again.compacted_for_room).toBeNull();
    expect(again.proposal?.status).toBe("unchanged");
    expect(gitView(repo)).toBe(before);
  });

  it("without the key, an earlier run --pr (its staging tree) is how the Director knows", async () => {
    const repo = await directorClone(SMALL);
    const first = await run(repo, ["--pr", "--force"], 1_800_001_000);
    expect(first.proposal?.status).toMatch(/nothing-to-propose|unchanged/);
    const before = gitView(repo);
    const { path, texts } = factsFile("auto", 1500);
    await ingest(repo, path, 1_800_001_010);
    expect(gitView(repo)).toBe(before);
    const r = await run(repo, ["--pr", "--force"], 1_800_001_020);
    expect(r.proposal?.status).toMatch(/created|updated|regenerated/);
    const head = r.proposal?.head_sha as string;
    const onBranch = new Set(factsIn((p) => fake.git.git(["show", `${head}:${p}`])));
    for (const text of texts) expect(onBranch.has(text), text).toBe(true);
    expect(gitView(repo)).toBe(before);
  });

  it("run --pr makes room for its spool drain in the staging tree, even with publish = work-tree", async () => {
    const repo = await directorClone(`${SMALL}publish = "work-tree"\n`);
    const texts = Array.from(
      { length: 1000 },
      (_, i) => `spool fact ${String(i).padStart(4, "0")}`,
    );
    const notes = join(dirs.dir("engram-room-notes-"), "notes.ndjson");
    writeFileSync(
      notes,
      texts.map((text) => `${JSON.stringify({ kind: "fact", text })}\n`).join(""),
    );
    const emitted = await worker(["emit", "--from", notes, "--worker", "w9"], { cwd: repo.dir });
    expect(emitted.code, describeResult(emitted)).toBe(0);
    const before = gitView(repo);
    // The drain passes the 400-event budget: it compacts for room, inside run --pr.
    const r = await run(repo, ["--pr", "--force"], 1_800_003_000);
    expect(r.compacted_for_room?.compactions).toBeGreaterThan(0);
    expect((r.compacted_for_room?.events ?? 0) + r.compacted_events).toBe(1000);
    expect(r.proposal?.status).toMatch(/created|updated|regenerated/);
    const head = r.proposal?.head_sha as string;
    const onBranch = new Set(factsIn((p) => fake.git.git(["show", `${head}:${p}`])));
    for (const text of texts) expect(onBranch.has(text), text).toBe(true);
    expect(gitView(repo)).toBe(before);
  });
});

describe("compaction for room when memory is published in the work tree", () => {
  it("writes the work tree as before, and the next run reports what the ingest wrote", async () => {
    const repo = dirs.repo("engram-room-local-");
    repo.writeConfig(SMALL);
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    const { path, texts } = factsFile("local", 1500);
    await ingest(repo, path, 1_800_002_000);
    // The ingest compacted into the work tree: its catalog lists the compacted facts.
    const read = (p: string) => readFileSync(join(repo.dir, p), "utf8");
    const inTree = new Set(factsIn(read));
    expect(inTree.size).toBeGreaterThan(1000);
    for (const text of inTree) expect(texts).toContain(text);
    const verify = await director(["verify"], { cwd: repo.dir });
    expect(verify.code, describeResult(verify)).toBe(0);

    const r = await run(repo, ["--force"], 1_800_002_010);
    const room = r.compacted_for_room as RoomReport;
    expect(room.compactions).toBeGreaterThan(1);
    expect(room.events + r.compacted_events).toBe(1500);
    expect(room.written_by_ingest).toBeGreaterThan(0);
    expect(new Set(factsIn(read))).toEqual(new Set(texts));
    // Reported once.
    const again = await run(repo, [], 1_800_002_020);
    expect(again.compacted_for_room).toBeNull();
  });
});
