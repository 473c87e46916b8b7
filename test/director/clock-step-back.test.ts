/**
 * A Director whose clock steps back (a state folder restored on a machine whose clock is
 * behind, an earlier SOURCE_DATE_EPOCH) keeps running: the buffer's events were received
 * "out of order", and the flush used to stop at the write check with exit 70, run after run.
 */
import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, director, worker } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("a Director clock that steps back", () => {
  it("runs, flushes and verifies when later runs are stamped earlier", async () => {
    const repo = dirs.repo("engram-clock-back-");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    const steps: [string, number][] = [
      ["The build takes 3 minutes", 1700000000],
      ["The deploy takes 9 minutes", 1600000000],
    ];
    for (const [text, epoch] of steps) {
      const emitted = await worker(["emit", "--kind", "fact", "--text", text], { cwd: repo.dir });
      expect(emitted.code, describeResult(emitted)).toBe(0);
      const run = await director(["run"], {
        cwd: repo.dir,
        env: { SOURCE_DATE_EPOCH: String(epoch) },
      });
      expect(run.code, describeResult(run)).toBe(0);
    }
    const flush = await director(["run", "--flush", "--json"], {
      cwd: repo.dir,
      env: { SOURCE_DATE_EPOCH: "1600000100" },
    });
    expect(flush.code, describeResult(flush)).toBe(0);
    const verify = await director(["verify"], { cwd: repo.dir });
    expect(verify.code, describeResult(verify)).toBe(0);
    expect(existsSync(repo.path("memory", "st", "20231114-221320Z"))).toBe(true);
  });
});
