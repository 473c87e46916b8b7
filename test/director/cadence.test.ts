/**
 * `memory_md_update_cadence`: MEMORY.md always follows its catalog; periodic and hybrid add a
 * "Now" section of the live workers, rendered again every N heartbeats.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { emptyCatalog } from "../../src/core/model/engram.js";
import { renderFocus } from "../../src/core/rendering/focus.js";
import { describeResult, director, worker } from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

async function setup(cadence: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-cadence-");
  repo.writeConfig(
    `[memory]\nbuffer_keep_recent_events = 0\nmemory_md_update_cadence = "${cadence}"\nmemory_md_update_every_n_heartbeats = 3\n`,
  );
  expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
  return repo;
}

async function beat(repo: TempRepo, id: string, stage: string, epoch: number) {
  const r = await worker(["heartbeat", "--worker", id, "--stage", stage, "--issue", "4"], {
    cwd: repo.dir,
    env: { SOURCE_DATE_EPOCH: String(epoch) },
  });
  expect(r.code, describeResult(r)).toBe(0);
}

async function run(repo: TempRepo, epoch: number, force = false) {
  const r = await director(["run", "--json", ...(force ? ["--force"] : [])], {
    cwd: repo.dir,
    env: { SOURCE_DATE_EPOCH: String(epoch) },
  });
  expect(r.code, describeResult(r)).toBe(0);
  return readFileSync(repo.path("MEMORY.md"), "utf8");
}

describe("memory_md_update_cadence", () => {
  it("on_merge never shows the swarm", async () => {
    const repo = await setup("on_merge");
    for (let i = 0; i < 4; i++) await beat(repo, "w1", "code", 1_800_000_000 + i);
    expect(await run(repo, 1_800_000_010)).not.toMatch(/## Now/);
  });

  it("periodic renders Now every N heartbeats, and keeps it at a catalog change in between", async () => {
    const repo = await setup("periodic");
    await beat(repo, "w1", "plan", 1_800_000_000);
    await beat(repo, "w2", "code", 1_800_000_001);
    expect(await run(repo, 1_800_000_002)).not.toMatch(/## Now/);
    await beat(repo, "w1", "test", 1_800_000_003);
    const due = await run(repo, 1_800_000_004);
    expect(due).toMatch(/## Now\n\n- w1: test, issue #4\n- w2: code, issue #4\n/);

    // A catalog change without 3 new heartbeats: the Now lines stay as they were.
    await beat(repo, "w2", "review", 1_800_000_005);
    const note = await worker(["emit", "--kind", "fact", "--text", "cadence is tested"], {
      cwd: repo.dir,
    });
    expect(note.code).toBe(0);
    const merged = await run(repo, 1_800_000_006, true);
    expect(merged).toMatch(/cadence is tested/);
    expect(merged).toMatch(/- w2: code, issue #4/);
    const verify = await director(["verify"], { cwd: repo.dir });
    expect(verify.code, describeResult(verify)).toBe(0);
  });

  it("hybrid refreshes Now at every render", async () => {
    const repo = await setup("hybrid");
    for (let i = 0; i < 3; i++) await beat(repo, "w1", `stage${i}`, 1_800_000_000 + i);
    expect(await run(repo, 1_800_000_003)).toMatch(/- w1: stage2, issue #4/);
    await beat(repo, "w1", "ship", 1_800_000_004);
    const note = await worker(["emit", "--kind", "fact", "--text", "hybrid renders"], {
      cwd: repo.dir,
    });
    expect(note.code).toBe(0);
    expect(await run(repo, 1_800_000_005, true)).toMatch(/- w1: ship, issue #4/);
  });

  it("the Now section never breaks MEMORY.md's budgets", () => {
    const now = Array.from({ length: 50 }, (_, i) => `worker-${i}: ${"x".repeat(400)}`);
    const view = renderFocus({
      catalog: emptyCatalog(),
      engrams: new Map(),
      maxBytes: 900,
      maxItems: 5,
      now,
    });
    expect(view.bytes).toBeLessThanOrEqual(900);
    expect(view.items).toBeLessThanOrEqual(5);
    expect(view.omitted).toBeGreaterThan(0);
  });
});
