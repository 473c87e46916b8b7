/**
 * kill -9 of the Director at seeded random points of a consolidation of several ended
 * sessions: each session is applied whole or not at all (the catalog on disk is always one
 * of the versions an uninterrupted run makes), and after the next run memory is byte for
 * byte what an uninterrupted run makes, one version line and one snapshot per session, and
 * verified.
 * ENGRAM_CRASH_SEED reproduces a run; ENGRAM_CRASH_ITERATIONS runs more or fewer kills.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
  worker,
} from "../support/bins.js";
import { killAfter, killWhen } from "../support/crash.js";
import { Rng } from "../support/random.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";
import { fillBuffer, memoryTree } from "../support/sessions.js";

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_123);
const ITERATIONS = Number(process.env.ENGRAM_CRASH_ITERATIONS ?? 24);
const ENV = { SOURCE_DATE_EPOCH: "1763856000" };
const SESSIONS = 8;
/** Sessions consolidated before the run that is killed; the run consolidates the others. */
const EARLIER = 2;
/** Claims an engram holds before the sessions: the sessions' `fact 0` to `fact 2` restate them. */
const HELD = ["fact 0", "fact 1", "fact 2"];

const temps = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => temps.cleanup());

async function ok(result: Promise<BinResult>): Promise<BinResult> {
  const r = await result;
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

/** The snapshot tags and their commits: the same content gives the same commits. */
const snapshots = (repo: TempRepo) =>
  git(repo.dir, ["for-each-ref", "--format=%(refname) %(objectname)", "refs/tags/engram"]);

const packs = (repo: TempRepo) =>
  readdirSync(join(repo.dir, ".git", "objects", "pack")).filter((f) => f.endsWith(".pack"));

const intent = (repo: TempRepo) => join(repo.dir, ".engram", "buffer", "cycle-intent.json");

/**
 * Sessions from two parents writing every kind, some of them the same keys and facts, some
 * facts restating what an engram holds (their evidence is raised, in the evidence file).
 */
async function template(): Promise<TempRepo> {
  const repo = temps.repo();
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  await ok(director(["init"], { cwd: repo.dir, env: ENV }));
  for (const text of HELD) {
    await ok(worker(["emit", "--kind", "lesson", "--text", text], { cwd: repo.dir, env: ENV }));
  }
  await ok(director(["run", "--force"], { cwd: repo.dir, env: ENV }));
  const rng = new Rng(SEED);
  for (let s = 0; s < SESSIONS; s++) {
    const start = jsonOf<{ session_id: string }>(
      await ok(worker(["session", "start", "--json"], { cwd: repo.dir, env: ENV })),
    );
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      const pick = rng.int(0, 3);
      if (pick === 0) {
        items.push({ kind: "episode", text: `s${s} e${i}`, outcome: "success", confidence: 0.6 });
      } else if (pick === 1) {
        items.push({ kind: "fact", text: `fact ${rng.int(0, 30)}`, confidence: 0.8 });
      } else if (pick === 2) {
        items.push({ kind: "state", key: `k${rng.int(0, 5)}`, value: { s, i } });
      } else {
        items.push({
          kind: "core",
          key: `c${rng.int(0, 3)}`,
          value: { [`f${i}`]: s },
          confidence: 0.95,
        });
      }
    }
    fillBuffer(repo, start.session_id, items);
    await ok(worker(["session", "end", start.session_id], { cwd: repo.dir, env: ENV }));
    // The later sessions start after the first ones were consolidated: two parents.
    if (s === EARLIER - 1) await ok(director(["run"], { cwd: repo.dir, env: ENV }));
  }
  return repo;
}

describe("kill -9 of the Director during a consolidation", () => {
  it(`applies each session whole or not at all (${ITERATIONS} seeded kills)`, async () => {
    onTestFailed(() => {
      console.error(`session crash test: ENGRAM_CRASH_SEED=${SEED}`);
    });
    const base = await template();
    const reference = temps.copy(base);
    const began = Date.now();
    const ran = jsonOf<{ sessions: unknown[]; catalog_version: number }>(
      await ok(director(["run", "--json"], { cwd: reference.dir, env: ENV })),
    );
    const wall = Date.now() - began;
    expect(ran.sessions).toHaveLength(SESSIONS - EARLIER);
    // Enough versions that their snapshots' objects go to git as one pack, not loose.
    expect(packs(reference)).toHaveLength(1);
    const expected = memoryTree(reference);
    const log = (expected.get("memory/versions.ndjson") as string).trim().split("\n");
    // The cycle that wrote the engram, then one version per session.
    expect(log).toHaveLength(SESSIONS + 1);
    const tags = snapshots(reference);
    expect(tags.trim().split("\n")).toHaveLength(SESSIONS + 1);
    const evidence = JSON.parse(expected.get("memory/knowledge/evidence.json") as string);
    expect(evidence.records.length).toBeGreaterThan(0);
    const hashes = new Set(
      log.map((l) => (JSON.parse(l) as { catalog_hash: string }).catalog_hash),
    );
    const baseCatalog = JSON.parse(readFileSync(join(base.dir, "memory", "catalog.json"), "utf8"));
    hashes.add(baseCatalog.hash);

    const rng = new Rng(SEED + 1);
    let killedMidway = 0;
    for (let round = 0; round < ITERATIONS; round++) {
      const repo = temps.copy(base);
      const spawned = spawnBin(DIRECTOR_BIN, ["run", "--json"], {
        cwd: repo.dir,
        env: ENV,
        timeoutMs: 60_000,
      });
      // Half the kills at a random time of the whole run, half a few milliseconds after a
      // consolidation step has made its intent durable (the heart of the crash window).
      if (round % 2 === 0) killAfter(spawned, Math.floor(rng.float() * wall * 1.2));
      else killWhen(spawned, () => existsSync(intent(repo)), rng.int(0, 12));
      const result = await spawned.done;
      const catalog = JSON.parse(readFileSync(join(repo.dir, "memory", "catalog.json"), "utf8"));
      // Whole sessions only: the catalog is one a run without a kill makes.
      expect(hashes.has(catalog.hash), `round ${round}: catalog ${catalog.hash}`).toBe(true);
      // Killed inside a consolidation: its intent is durable, its files maybe half written.
      if (result.code !== 0 && existsSync(intent(repo))) killedMidway++;
      await ok(director(["run"], { cwd: repo.dir, env: ENV }));
      await ok(director(["verify"], { cwd: repo.dir, env: ENV }));
      expect(memoryTree(repo), `round ${round}`).toEqual(expected);
      // One snapshot per version, each what an uninterrupted run writes, and every object
      // a tag reaches is there.
      expect(snapshots(repo), `round ${round}`).toBe(tags);
      git(repo.dir, ["fsck", "--strict", "--no-dangling"]);
    }
    // The kills land before, during and after the consolidation, not all in one place.
    expect(killedMidway).toBeGreaterThan(0);
  }, 600_000);
});
