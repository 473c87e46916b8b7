/**
 * Dedup before create across `director run` cycles that share one batch (one second, as under
 * one fixed SOURCE_DATE_EPOCH), through the built bins: a restated claim raises the first
 * cycle's evidence, and a cycle run again after its end was lost converges instead.
 */
import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { learningId } from "../../src/core/graph/learnings.js";
import type { Catalog, Engram } from "../../src/schema/engram.js";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { snapshot } from "../support/memory.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

const ENV = { SOURCE_DATE_EPOCH: "1800000000" };
const CLAIM = "Cache the npm folder between CI jobs";

interface RunJson {
  compacted_events: number;
  engrams_written: number;
  written: string[];
}

async function setup(): Promise<TempRepo> {
  const repo = dirs.repo("engram-same-second-");
  jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  return repo;
}

async function emit(repo: TempRepo, text: string, sender: string): Promise<void> {
  const args = ["emit", "--kind", "lesson", "--text", text, "--topic", "ci", "--worker", sender];
  jsonOf(await worker([...args, "--json"], { cwd: repo.dir, env: ENV }));
}

async function run(repo: TempRepo): Promise<RunJson> {
  return jsonOf<RunJson>(await director(["run", "--force", "--json"], { cwd: repo.dir, env: ENV }));
}

/** One note, then one cycle, both in the same fixed second. */
async function cycle(repo: TempRepo, text: string, sender: string): Promise<RunJson> {
  await emit(repo, text, sender);
  return run(repo);
}

function engramsOf(repo: TempRepo): Engram[] {
  const catalog = JSON.parse(readFileSync(repo.path("memory", "catalog.json"), "utf8")) as Catalog;
  return catalog.entries.map((e) => JSON.parse(readFileSync(repo.path(e.path), "utf8")) as Engram);
}

describe("director run: two cycles in one second", () => {
  it("the second cycle's restated claim raises the first one's evidence, no copy", async () => {
    const repo = await setup();
    const first = await cycle(repo, CLAIM, "w1");
    const second = await cycle(repo, "cache the npm folder  between CI jobs", "w2");
    expect(first.engrams_written).toBe(1);
    expect(second.engrams_written).toBe(1);
    const engrams = engramsOf(repo);
    expect(new Set(engrams.map((e) => e.version)).size).toBe(1);
    const stating = engrams.filter((e) => e.facts.some((f) => f.includes("npm folder")));
    expect(stating.map((e) => e.facts)).toEqual([[`Lesson: ${CLAIM}`]]);
    const raising = engrams.find((e) => second.written[0]?.endsWith(`${e.engram_id}.json`));
    expect(raising?.facts).toEqual([]);
    expect(raising?.evidence).toEqual({ [learningId(CLAIM)]: 1 });
  });

  it("a cycle run again after its end was lost writes nothing new", async () => {
    const repo = await setup();
    await cycle(repo, CLAIM, "w1");
    // A restated claim (evidence of the first cycle's) and a new one (the second cycle's own).
    await emit(repo, CLAIM.toLowerCase(), "w2");
    await emit(repo, "Pin the Node version in CI", "w2");
    // The state folder as it was before the second cycle: what a runner killed after pushing
    // the memory files, and before saving its state, leaves to the next run.
    const state = repo.path(".engram");
    const saved = dirs.dir("engram-saved-state-");
    cpSync(state, saved, { recursive: true });
    const second = await run(repo);
    expect(second.engrams_written).toBe(1);
    const roots = ["memory", "MEMORY.md"];
    const files = snapshot(repo.dir, roots);

    rmSync(state, { recursive: true, force: true });
    cpSync(saved, state, { recursive: true });
    const again = await run(repo);
    expect(again.compacted_events).toBe(2);
    expect(again.engrams_written).toBe(0);
    expect(snapshot(repo.dir, roots)).toEqual(files);
    // The lost run's engram is left out as the slice's own (else its new claim would come back
    // as evidence of itself), the first cycle's is not (else the claim would be restated).
    const facts = engramsOf(repo).map((e) => e.facts);
    expect(facts.sort()).toEqual([[`Lesson: ${CLAIM}`], ["Lesson: Pin the Node version in CI"]]);
    expect(JSON.parse(readFileSync(join(state, "buffer", "meta.json"), "utf8"))).toMatchObject({
      compacted_batch: {
        engrams: engramsOf(repo)
          .map((e) => e.engram_id)
          .sort(),
      },
    });
  });
});
