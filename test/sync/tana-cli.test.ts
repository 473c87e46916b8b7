import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, type BinResult, describeResult, director, worker } from "../support/bins.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import { git, TempDirs } from "../support/repo.js";
import { tanaRepoConfig } from "../support/tana-fixtures.js";

const EPOCH = 1_767_607_200; // 2026-01-05T10:00:00Z
const dirs = new TempDirs();
let tana: FakeTana | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await tana?.stop();
  tana = undefined;
});
afterAll(() => dirs.cleanup());

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

/**
 * A repository whose two learnings (and `more`) are on main, a Tana stand-in with Ada and
 * thirty meetings naming her, and `sync`.
 */
async function setup(more: readonly string[] = []) {
  const fake = new FakeTana({ token: "in-tok", localToken: "loc-tok", perSecond: QUICK_TANA_RATE });
  tana = fake;
  await fake.start();
  const ada = fake.store.addEntity("Ada Lovelace", "person");
  for (let i = 0; i < 30; i++) fake.store.addNode(`1:1 with Ada Lovelace, week ${i}`);
  const repo = dirs.repo("engram-tana-cli-");
  const env = {
    SOURCE_DATE_EPOCH: String(EPOCH),
    TANA_TOKEN: "in-tok",
    TANA_LOCAL_TOKEN: "loc-tok",
  };
  ok(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(tanaRepoConfig(fake));
  repo.write(
    "config/registry.toml",
    '[[people]]\nid = "ada"\nname = "Ada Lovelace"\naliases = ["Ada"]\n[[people]]\nid = "bob"\nname = "Bob Nobody"\naliases = ["Bob"]\n',
  );
  const notes = [
    "Ada found the cache must be warmed first",
    "retry the flaky fetch twice",
    ...more,
  ].map((text) => ({ kind: "lesson", text, confidence: 0.95, privacy: "public", topics: ["t"] }));
  const file = repo.write("notes.ndjson", `${notes.map((n) => JSON.stringify(n)).join("\n")}\n`);
  ok(await worker(["emit", "--from", file], { cwd: repo.dir, env }));
  ok(await director(["run", "--force"], { cwd: repo.dir, env }));
  // On main they are confirmed learnings (only in the work tree they would be proposals).
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", "memory"]);
  const sync = async (...args: string[]) =>
    JSON.parse(ok(await director(["sync", ...args, "--json"], { cwd: repo.dir, env })).stdout);

  return { fake, ada, sync, repo, env };
}

describe("director sync --target tana through the bins", () => {
  it("creates the supertags, sends memory's learnings linked to registry people, once", async () => {
    const { fake, ada, sync } = await setup();
    tana = fake;
    const init = await sync("init", "--target", "tana");
    expect(init.created).toEqual(["learning", "proposal"]);
    const first = await sync("run", "--target", "tana");
    expect(first.sent.created_or_updated).toBe(2);
    expect(first.tana.links.linked).toBe(1);
    const tag = tana.store.tagByName("pai_learning");
    const nodes = tana.store.tagged(tag?.id ?? "");
    expect(nodes).toHaveLength(2);
    const refs = nodes
      .flatMap((n) => [...n.fields.values()].flat())
      .filter((v) => v.startsWith("ref:"));
    expect(refs).toEqual([`ref:${ada}`]);

    const calls = tana.calls.length;
    const second = await sync("run", "--target", "tana", "--resync");
    expect(second.sent.created_or_updated).toBe(0);
    expect(second.tana.stale).toEqual([]);
    expect(tana.calls.length).toBe(calls);
    const status = await sync("status", "--target", "tana");
    expect(status.health.healthy).toBe(true);
    expect(status.health.schema).toEqual({ learning: "ok", proposal: "ok" });
  });

  it("says which entity was not linked and why, in the warnings and the sync log", async () => {
    const { fake, repo, env } = await setup(["Bob says pin the toolchain first"]);
    tana = fake;
    const r = ok(
      await director(["sync", "run", "--target", "tana", "--json"], { cwd: repo.dir, env }),
    );
    const out = JSON.parse(r.stdout);
    expect(out.sent.created_or_updated).toBe(3);
    expect(out.tana.links).toEqual({ linked: 1, unknown: 1, ambiguous: 0, failed: 0 });
    expect(r.stderr).toContain(
      'tana: not linked in 1 item(s): person:bob (not found: no #person node named "Bob Nobody" or "Bob" in Tana)',
    );
    const log = readFileSync(
      join(repo.dir, ".engram/sync/log", readdirSync(join(repo.dir, ".engram/sync/log"))[0] ?? ""),
      "utf8",
    );
    const notice = log
      .split("\n")
      .filter((l) => l.includes('"op":"notice"'))
      .map((l) => JSON.parse(l));
    expect(notice).toEqual([
      expect.objectContaining({
        target: "tana",
        ok: false,
        key: expect.stringMatching(/^learning:/),
        detail: { entity: "person:bob", link: "not_found" },
      }),
    ]);
    expect([...fake.store.nodes.values()].filter((n) => /Bob Nobody/.test(n.name))).toEqual([]);
  }, 120_000);

  it("--dry-run lists what would be sent with no call; --all sends everything again in place", async () => {
    const { fake, sync, repo, env } = await setup();
    const silent = () => ({ input: fake.calls.length, local: fake.localRequests });
    const before = silent();
    const dry = await sync("run", "--target", "tana", "--dry-run");
    expect(dry.dry_run).toBe(true);
    expect(dry.would_send.map((s: { action: string }) => s.action)).toEqual(["create", "create"]);
    expect(silent()).toEqual(before);
    expect(fake.store.tagByName("pai_learning")).toBeUndefined();

    expect((await sync("run", "--target", "tana")).sent.created_or_updated).toBe(2);
    const synced = silent();
    expect((await sync("run", "--target", "tana", "--dry-run")).would_send).toEqual([]);
    const again = await sync("run", "--target", "tana", "--dry-run", "--all");
    expect(again.would_send.map((s: { action: string }) => s.action)).toEqual(["update", "update"]);
    expect(silent()).toEqual(synced);

    const all = await sync("run", "--target", "tana", "--all");
    expect(all.sent.created_or_updated).toBe(2);
    expect(fake.localRequests).toBeGreaterThan(synced.local);
    const tag = fake.store.tagByName("pai_learning");
    expect(fake.store.tagged(tag?.id ?? "")).toHaveLength(2);

    // GitHub configured but unreachable: git alone decides the states, the run goes on.
    const offline = ok(
      await director(["sync", "run", "--target", "tana", "--dry-run"], {
        cwd: repo.dir,
        env: {
          ...env,
          GITHUB_TOKEN: "ghs_unreachable000000000000000000000000",
          GITHUB_REPOSITORY: "o/r",
          GITHUB_API_URL: "http://127.0.0.1:1",
        },
      }),
    );
    expect(offline.stderr).toMatch(/learning states from git only/);
  });

  it("a call carried out but answered 503 is looked up through the Local API, never doubled", async () => {
    const { fake, repo } = await setup();
    const run = async (seconds: number) =>
      JSON.parse(
        ok(
          await director(["sync", "run", "--target", "tana", "--json"], {
            cwd: repo.dir,
            env: {
              SOURCE_DATE_EPOCH: String(EPOCH + seconds),
              TANA_TOKEN: "in-tok",
              TANA_LOCAL_TOKEN: "loc-tok",
            },
          }),
        ).stdout,
      );
    // init runs first (its calls succeed); the learnings' call then creates and answers 503.
    const init = await run(0);
    expect(init.sent.created_or_updated).toBe(2);
    const before = fake.copiesByKey().size;
    // A new learning, sent in a call whose answer is lost after the nodes were made.
    const file = repo.write(
      "more.ndjson",
      `${JSON.stringify({ kind: "lesson", text: "pin the toolchain version", confidence: 0.95, privacy: "public", topics: ["t"] })}\n`,
    );
    ok(
      await worker(["emit", "--from", file], {
        cwd: repo.dir,
        env: { SOURCE_DATE_EPOCH: String(EPOCH + 10) },
      }),
    );
    ok(
      await director(["run", "--force"], {
        cwd: repo.dir,
        env: { SOURCE_DATE_EPOCH: String(EPOCH + 10) },
      }),
    );
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "more memory"]);
    fake.failAfterWrite(503);
    const failed = await run(20);
    expect(failed.sent.created_or_updated).toBe(0);
    expect(fake.lostAnswers).toBe(1);
    expect(fake.copiesByKey().size).toBe(before + 1);
    const again = await run(2000);
    expect(again.sent.created_or_updated).toBe(1);
    const doubled = [...fake.copiesByKey()].filter(([, n]) => n > 1);
    expect(doubled).toEqual([]);
    expect(fake.copiesByKey().size).toBe(before + 1);
  }, 120_000);
});
