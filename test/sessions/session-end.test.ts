import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, stop } from "../bus/tcp-hub-fixtures.js";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  director,
  jsonOf,
  worker,
} from "../support/bins.js";
import { git, TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";
import { fillBuffer, memoryTree } from "../support/sessions.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

const ENV = { SOURCE_DATE_EPOCH: "1763856000" };

interface Start {
  session_id: string;
  parent_version: number;
}
interface End {
  session_id: string;
  parent_version: number;
  items: number;
  parts: number;
  spooled: boolean;
  transport: string;
  event_ids: string[];
}
interface Report {
  session_id: string;
  parent_version: number;
  from_version: number;
  to_version: number;
  applied: Record<string, number>;
  merged: number;
  rejected: Record<string, number>;
  conflicts: { kind: string; key: string; resolution: string; proposed?: unknown }[];
}
interface Run {
  catalog_version: number;
  sessions: Report[];
}
interface History extends LogLine {
  catalog_hash: string;
  tag: string | null;
  snapshot: string | null;
}
interface LogLine {
  version: number;
  made_by: { kind: string; session_id?: string };
  counts: { episodes: number; facts: number; state: number; core: number; engrams: number };
}

async function ok(result: Promise<BinResult>): Promise<BinResult> {
  const r = await result;
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

async function initRepo(config = ""): Promise<TempRepo> {
  const repo = temps.repo();
  if (config !== "") repo.writeConfig(config);
  await ok(director(["init"], { cwd: repo.dir, env: ENV }));
  return repo;
}

const start = async (repo: TempRepo) =>
  jsonOf<Start>(await ok(worker(["session", "start", "--json"], { cwd: repo.dir, env: ENV })));

const write = (repo: TempRepo, id: string, args: string[]) =>
  ok(worker(["session", "write", "--session", id, ...args], { cwd: repo.dir, env: ENV }));

const writeFact = (repo: TempRepo, id: string, text: string, confidence: string) =>
  write(repo, id, ["--kind", "fact", "--text", text, "--confidence", confidence]);

async function writeEpisodes(
  repo: TempRepo,
  id: string,
  texts: string[],
  outcome: string,
  confidence: string,
): Promise<void> {
  for (const text of texts) {
    await write(repo, id, [
      "--kind",
      "episode",
      "--text",
      text,
      "--outcome",
      outcome,
      "--confidence",
      confidence,
    ]);
  }
}

const end = async (repo: TempRepo, id: string, extra: string[] = []) =>
  jsonOf<End>(
    await ok(worker(["session", "end", id, "--json", ...extra], { cwd: repo.dir, env: ENV })),
  );

const run = async (repo: TempRepo) =>
  jsonOf<Run>(await ok(director(["run", "--json"], { cwd: repo.dir, env: ENV })));

async function verify(repo: TempRepo): Promise<void> {
  await ok(director(["verify"], { cwd: repo.dir, env: ENV }));
}

function versionLog(repo: TempRepo): LogLine[] {
  return readFileSync(join(repo.dir, "memory", "versions.ndjson"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as LogLine);
}

function readJson<T>(repo: TempRepo, path: string): T {
  return JSON.parse(readFileSync(join(repo.dir, path), "utf8")) as T;
}

describe("worker session end", () => {
  it("sends the buffer once, then refuses writes, a second end and a discard", async () => {
    const repo = await initRepo();
    const s = await start(repo);
    await writeFact(repo, s.session_id, "ci is slow", "0.9");
    const e = await end(repo, s.session_id);
    expect(e).toMatchObject({ session_id: s.session_id, items: 1, parts: 1, spooled: true });
    expect(e.event_ids).toEqual([`session_end-${s.session_id}-1`]);
    const spool = readdirSync(join(repo.dir, ".engram", "spool"));
    expect(spool).toHaveLength(1);

    const late = await worker(
      [
        "session",
        "write",
        "--session",
        s.session_id,
        "--kind",
        "fact",
        "--text",
        "x",
        "--confidence",
        "0.9",
      ],
      { cwd: repo.dir, env: ENV },
    );
    expect(late.code).toBe(3);
    expect(late.stderr).toContain(`session ${s.session_id} was ended`);
    const again = await worker(["session", "end", s.session_id], { cwd: repo.dir, env: ENV });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`session ${s.session_id} was ended`);
    const discard = await worker(["session", "discard", s.session_id], { cwd: repo.dir, env: ENV });
    expect(discard.code).toBe(3);
    const shown = jsonOf<{ status: string }>(
      await ok(worker(["session", "show", s.session_id, "--json"], { cwd: repo.dir, env: ENV })),
    );
    expect(shown.status).toBe("ended");
    const unknown = await worker(["session", "end", "s_0000000000000000"], { cwd: repo.dir });
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("s_0000000000000000");
  });

  it("delivers over the TCP hub, acknowledged there, consolidated by the next run", async () => {
    const repo = await initRepo();
    const hub = await serve(repo.dir, [], ENV);
    let e: End;
    try {
      const s = await start(repo);
      await write(repo, s.session_id, [
        "--kind",
        "lesson",
        "--text",
        "hub works",
        "--confidence",
        "0.9",
      ]);
      e = await end(repo, s.session_id, ["--bus", `tcp://${hub.address}`]);
    } finally {
      await stop(hub);
    }
    expect(e).toMatchObject({ transport: "tcp", spooled: false, parts: 1 });
    expect(
      existsSync(join(repo.dir, ".engram", "spool"))
        ? readdirSync(join(repo.dir, ".engram", "spool"))
        : [],
    ).toEqual([]);
    const r = await run(repo);
    expect(r.sessions.map((x) => [x.session_id, x.applied.lesson])).toEqual([[e.session_id, 1]]);
    await verify(repo);
  });

  it("cuts a large buffer into parts of one delivery, consolidated whole", async () => {
    const repo = await initRepo(tomlConfig({ agent_bus: { max_message_bytes: 2048 } }));
    const s = await start(repo);
    fillBuffer(
      repo,
      s.session_id,
      Array.from({ length: 30 }, (_, i) => ({
        kind: "episode",
        text: `episode number ${i} ${"x".repeat(60)}`,
        outcome: "success",
        confidence: 0.5,
      })),
    );
    const e = await end(repo, s.session_id);
    expect(e.parts).toBeGreaterThan(1);
    expect(readdirSync(join(repo.dir, ".engram", "spool"))).toHaveLength(1);
    const r = await run(repo);
    expect(r.sessions).toHaveLength(1);
    expect(r.sessions[0]?.applied.episode).toBe(30);
    await verify(repo);
  });
});

describe("director run consolidates ended sessions", () => {
  it("the seed's flow: 100, then 103, then 105 episodes, one version per session", async () => {
    const repo = await initRepo();
    const seed = await start(repo);
    fillBuffer(
      repo,
      seed.session_id,
      Array.from({ length: 100 }, (_, i) => ({
        kind: "episode",
        text: `seed episode ${i}`,
        outcome: i % 3 === 0 ? "failure" : "success",
        confidence: 0.7,
      })),
    );
    await end(repo, seed.session_id);
    const r1 = await run(repo);
    expect(r1.catalog_version).toBe(1);

    const a = await start(repo);
    expect(a.parent_version).toBe(1);
    await writeEpisodes(repo, a.session_id, ["a 1", "a 2", "a 3"], "success", "0.8");
    await end(repo, a.session_id);
    const r2 = await run(repo);
    expect(r2.sessions.map((s) => [s.session_id, s.from_version, s.to_version])).toEqual([
      [a.session_id, 1, 2],
    ]);

    const b = await start(repo);
    expect(b.parent_version).toBe(2);
    await writeEpisodes(repo, b.session_id, ["b 1", "b 2"], "partial", "0.9");
    await end(repo, b.session_id);
    const r3 = await run(repo);
    expect(r3.catalog_version).toBe(3);

    const log = versionLog(repo);
    expect(log.map((l) => [l.version, l.counts.episodes, l.made_by])).toEqual([
      [1, 100, { kind: "session", session_id: seed.session_id }],
      [2, 103, { kind: "session", session_id: a.session_id }],
      [3, 105, { kind: "session", session_id: b.session_id }],
    ]);
    const catalog = readJson<{ catalog_version: number; hash: string }>(
      repo,
      "memory/catalog.json",
    );
    expect(log.at(-1)).toMatchObject({
      version: catalog.catalog_version,
      catalog_hash: catalog.hash,
    });
    const episodes = readJson<{ version: number; episodes: { id: string; surprise: number }[] }>(
      repo,
      `memory/sessions/${b.session_id}.json`,
    );
    expect(episodes.version).toBe(3);
    expect(episodes.episodes.map((e) => e.surprise)).toEqual([0.4, 0.4]);
    await verify(repo);

    // Every session version is in history with its snapshot tag, and the snapshot is memory
    // at that version, read by git itself.
    const h = jsonOf<{ versions: History[] }>(
      await ok(director(["history", "--json"], { cwd: repo.dir, env: ENV })),
    ).versions;
    expect(h.map((v) => [v.version, v.counts.episodes, v.made_by, v.tag])).toEqual([
      [3, 105, { kind: "session", session_id: b.session_id }, "engram/v3"],
      [2, 103, { kind: "session", session_id: a.session_id }, "engram/v2"],
      [1, 100, { kind: "session", session_id: seed.session_id }, "engram/v1"],
    ]);
    for (const v of h) {
      const shown = JSON.parse(git(repo.dir, ["show", `engram/v${v.version}:memory/catalog.json`]));
      expect(shown).toMatchObject({ catalog_version: v.version, hash: v.catalog_hash });
      expect(v.snapshot).toBe(git(repo.dir, ["rev-parse", `engram/v${v.version}`]).trim());
    }
    expect(git(repo.dir, ["rev-parse", "engram/v3^"]).trim()).toBe(h[1]?.snapshot);
    const sessionsAt2 = git(repo.dir, ["ls-tree", "--name-only", "engram/v2:memory/sessions"]);
    expect(sessionsAt2.split("\n").filter(Boolean).sort()).toEqual(
      [`${seed.session_id}.json`, `${a.session_id}.json`].sort(),
    );
    const d = jsonOf<{ episodes: { from: number; to: number } }>(
      await ok(director(["diff", "1", "3", "--json"], { cwd: repo.dir, env: ENV })),
    );
    expect(d.episodes).toEqual({ from: 100, to: 105 });

    // Nothing new: a second run makes no version.
    const idle = await run(repo);
    expect(idle.sessions).toEqual([]);
    expect(idle.catalog_version).toBe(3);
    // A later run writes the same snapshots again (a crash's recovery): nothing moves.
    expect(git(repo.dir, ["rev-parse", "engram/v3"]).trim()).toBe(h[0]?.snapshot);

    // Rolling back to version 2 brings back its documents, listed, and its counts.
    await ok(director(["rollback", "2", "--json"], { cwd: repo.dir, env: ENV }));
    expect(versionLog(repo).at(-1)).toMatchObject({
      version: 4,
      made_by: { kind: "rollback", target: 2 },
      counts: { episodes: 103 },
    });
    const listed = readJson<{ documents: { path: string }[] }>(repo, "memory/catalog.json");
    expect(listed.documents.map((d) => d.path).sort()).toEqual(
      [`memory/sessions/${seed.session_id}.json`, `memory/sessions/${a.session_id}.json`].sort(),
    );
    expect(existsSync(join(repo.dir, `memory/sessions/${b.session_id}.json`))).toBe(false);
    await verify(repo);
    // Session B stays consolidated once: a run after the rollback does not apply it again.
    expect((await run(repo)).sessions).toEqual([]);
  });

  it("two sessions from one parent: later state wins, core held, a shared fact merged", async () => {
    const repo = await initRepo();
    const a = await start(repo);
    const b = await start(repo);
    for (const [s, v] of [
      [a, 1],
      [b, 2],
    ] as const) {
      await write(repo, s.session_id, [
        "--kind",
        "state",
        "--key",
        "build",
        "--value",
        `{"run":${v}}`,
      ]);
      await write(repo, s.session_id, [
        "--kind",
        "core",
        "--key",
        "team",
        "--value",
        `{"size":${v}}`,
        "--confidence",
        "0.95",
      ]);
      await write(repo, s.session_id, [
        "--kind",
        "fact",
        "--text",
        v === 1 ? "Deploys go out on Tuesdays" : "deploys  go out on tuesdays",
        "--confidence",
        "0.8",
      ]);
      await write(repo, s.session_id, [
        "--kind",
        "lesson",
        "--text",
        `maybe ${v}`,
        "--confidence",
        "0.5",
      ]);
    }
    await end(repo, a.session_id);
    await end(repo, b.session_id);
    const r = await run(repo);
    expect(r.sessions.map((s) => s.session_id)).toEqual([a.session_id, b.session_id]);
    const [ra, rb] = r.sessions as [Report, Report];
    expect([ra.from_version, ra.to_version, rb.from_version, rb.to_version]).toEqual([0, 1, 1, 2]);
    expect(ra.applied).toMatchObject({ state: 1, core: 1, fact: 1 });
    expect(ra.rejected.low_confidence).toBe(1);
    expect(rb.applied).toMatchObject({ state: 1, core: 0, fact: 0 });
    expect(rb.merged).toBe(1);
    // State is applied before core: its conflicts come first.
    expect(rb.conflicts).toEqual([
      {
        kind: "state",
        key: "build",
        parent_version: 0,
        changed_in_version: 1,
        resolution: "overwritten",
      },
      {
        kind: "core",
        key: "team",
        parent_version: 0,
        changed_in_version: 1,
        resolution: "held_for_review",
        proposed: { size: 2 },
      },
    ]);
    // The held change is in the session's immutable record, for review.
    const record = readJson<{ conflicts: unknown[] }>(repo, `memory/sessions/${b.session_id}.json`);
    expect(record.conflicts).toEqual(rb.conflicts);

    expect(
      readJson<{ value: unknown; history: unknown[] }>(repo, "memory/state/build.json"),
    ).toMatchObject({
      value: { run: 2 },
      history: [{ value: { run: 1 }, version: 1, session_id: a.session_id }],
    });
    expect(readJson<{ value: unknown }>(repo, "memory/core/team.json").value).toEqual({ size: 1 });
    const facts = readJson<{ records: { text: string; evidence: number }[] }>(
      repo,
      "memory/knowledge/fact.json",
    );
    expect(facts.records).toEqual([
      expect.objectContaining({ text: "Deploys go out on Tuesdays", evidence: 2 }),
    ]);
    const focus = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
    expect(focus.indexOf("## Core")).toBeGreaterThan(0);
    expect(focus.indexOf("## Core")).toBeLessThan(focus.indexOf("## State"));
    await verify(repo);
  });

  it("applies a session once however often its end is delivered", async () => {
    const repo = await initRepo();
    const s = await start(repo);
    await writeFact(repo, s.session_id, "once only", "0.9");
    await end(repo, s.session_id);
    const spoolDir = join(repo.dir, ".engram", "spool");
    const [file] = readdirSync(spoolDir) as [string];
    const copy = join(repo.dir, "end-copy.ndjson");
    copyFileSync(join(spoolDir, file), copy);
    copyFileSync(copy, join(spoolDir, `dup-${file}`));
    const first = await run(repo);
    expect(first.sessions).toHaveLength(1);
    // Delivered again after it was applied (and after its buffer event is long gone).
    await ok(director(["run", "--flush", "--json"], { cwd: repo.dir, env: ENV }));
    copyFileSync(copy, join(spoolDir, file));
    const again = await run(repo);
    expect(again.sessions).toEqual([]);
    expect(versionLog(repo)).toHaveLength(1);
    await verify(repo);
  });

  it("a discarded session leaves memory byte-identical", async () => {
    const repo = await initRepo();
    const s0 = await start(repo);
    await write(repo, s0.session_id, ["--kind", "state", "--key", "release", "--value", '"1.2"']);
    await end(repo, s0.session_id);
    await run(repo);
    const before = memoryTree(repo);

    const s = await start(repo);
    await write(repo, s.session_id, ["--kind", "state", "--key", "release", "--value", '"9.9"']);
    await writeFact(repo, s.session_id, "never kept", "0.9");
    await ok(worker(["session", "discard", s.session_id], { cwd: repo.dir, env: ENV }));
    const r = await run(repo);
    expect(r.sessions).toEqual([]);
    expect(memoryTree(repo)).toEqual(before);
    expect(
      existsSync(join(repo.dir, ".engram", "spool"))
        ? readdirSync(join(repo.dir, ".engram", "spool"))
        : [],
    ).toEqual([]);
  });
});
