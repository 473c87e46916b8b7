/**
 * Every engram the Director writes is within `engram_max_bytes`, whichever path wrote it: a
 * cycle, compactions for room joined across an ingest (its settle into the work tree), a
 * flush. A group whose extras (episodes, telemetry, links) outgrow one engram is spread over
 * parts, and `director verify` accepts the Director's own output.
 */
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { runCycle } from "../../src/director/run.js";
import { verifyRepository } from "../../src/director/verify.js";
import { assertBuilt, describeResult, director } from "../support/bins.js";
import { git, TempDirs, tomlConfig } from "../support/repo.js";
import { swarmStream } from "../support/swarm-stream.js";

const dirs = new TempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

/** Every engram file of the work tree, path and size. */
function engramSizes(repo: string): { path: string; bytes: number }[] {
  const out: { path: string; bytes: number }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.startsWith("engram_")) {
        out.push({ path: relative(repo, full), bytes: statSync(full).size });
      }
    }
  };
  walk(join(repo, "memory"));
  return out;
}

function overBudget(repo: string, max: number): { path: string; bytes: number }[] {
  return engramSizes(repo).filter((f) => f.bytes > max);
}

describe("engram_max_bytes on every path", () => {
  it("director ingest of 3,006 events into a 500-event buffer writes engrams within 8,192 bytes, and verify passes", async () => {
    const repo = dirs.repo("engram-budget-");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    repo.writeConfig(
      "[memory]\nbuffer_max_events = 500\nengram_max_bytes = 8192\nst_max_files = 10000\nst_max_total_bytes = 67108864\n",
    );
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    const input = join(dirs.dir("engram-budget-input-"), "events.ndjson");
    writeFileSync(
      input,
      swarmStream({ count: 3006, seed: 7, episodes: 0.6, textChars: 900, workers: 80 }),
    );
    const env = { SOURCE_DATE_EPOCH: "1800000000" };
    const ingested = await director(["ingest", input, "--json"], {
      cwd: repo.dir,
      env,
      timeoutMs: 120_000,
    });
    expect(ingested.code, describeResult(ingested)).toBe(0);
    expect(engramSizes(repo.dir).length).toBeGreaterThan(0);
    expect(overBudget(repo.dir, 8192)).toEqual([]);
    const verified = await director(["verify"], { cwd: repo.dir });
    expect(verified.code, describeResult(verified)).toBe(0);

    const flushed = await director(["run", "--flush", "--json"], {
      cwd: repo.dir,
      env: { SOURCE_DATE_EPOCH: "1800000100" },
      timeoutMs: 120_000,
    });
    expect(flushed.code, describeResult(flushed)).toBe(0);
    expect(overBudget(repo.dir, 8192)).toEqual([]);
    expect((await director(["verify"], { cwd: repo.dir })).code).toBe(0);
  }, 240_000);

  it("holds for any budget and stream: every engram written fits, and verify finds nothing", async () => {
    process.env.SOURCE_DATE_EPOCH = "1800000000";
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            engramMax: fc.integer({ min: 2048, max: 12_000 }),
            bufferMax: fc.integer({ min: 20, max: 150 }),
          }),
          fc.record({
            count: fc.integer({ min: 30, max: 240 }),
            seed: fc.nat(),
            episodes: fc.double({ min: 0, max: 1, noNaN: true }),
            textChars: fc.integer({ min: 60, max: 1000 }),
            workers: fc.integer({ min: 1, max: 80 }),
          }),
          async (budget, shape) => {
            const repo = dirs.dir("engram-budget-prop-");
            try {
              git(repo, ["init", "-q", "-b", "main"]);
              initRepository(await openContext({ repo }));
              const config = tomlConfig({
                memory: {
                  buffer_max_events: budget.bufferMax,
                  buffer_keep_recent_events: 10,
                  engram_max_bytes: budget.engramMax,
                  st_max_files: 10_000,
                  lt_max_files: 10_000,
                },
              });
              writeFileSync(join(repo, "config", "dev.toml"), config);
              const ctx = await openContext({ repo });
              await ingestSource(ctx, {
                stream: Readable.from([swarmStream(shape)]),
                name: "test",
              });
              await runCycle(await openContext({ repo }), { flush: true });
              expect(overBudget(repo, budget.engramMax)).toEqual([]);
              expect(await verifyRepository(await openContext({ repo }))).toEqual([]);
            } finally {
              rmSync(repo, { recursive: true, force: true });
            }
          },
        ),
        { numRuns: 8 },
      );
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
  }, 240_000);
});
