/**
 * A lock file with no pid in it (a restored state folder, a tool that wrote something else)
 * held every Director off for the whole 60 s timeout, run after run, then failed: it is taken
 * over once it is a few seconds old, as an empty lock left by a creator that died is. A live
 * Director writes its pid within microseconds of creating the file. In a child of its own,
 * so that a wait fails this test through the child's safety net.
 */
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult } from "../support/bins.js";
import { acquireInChild } from "../support/lock-child.js";

const dir = mkdtempSync(join(tmpdir(), "engram-lock-garbage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a lock file no Director wrote", () => {
  it("is taken over once it is old enough, not waited on until the timeout", async () => {
    const lock = join(dir, "director.lock");
    writeFileSync(lock, "zz not a pid\n");
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    // A timeout far beyond the test's: acquiring at all shows the lock was taken over.
    const r = await acquireInChild(dir, lock, 3_600_000);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout.trim()).toBe("acquired true");
    expect(() => readFileSync(lock)).toThrow();
  });
});
