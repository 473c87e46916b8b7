/**
 * A lock path that is a link to nowhere exists for the lock's exclusive create and not for
 * its read: the acquisition loop once spun there for good, on the CPU, without a word (issue
 * 24). It runs in a child of its own, so that a spin fails this test through the child's
 * safety net instead of freezing the test runner.
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult } from "../support/bins.js";
import { acquireInChild } from "../support/lock-child.js";

const dir = mkdtempSync(join(tmpdir(), "engram-lock-link-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the Director lock at a link to nowhere", () => {
  it("is refused at once, naming the link, instead of a silent spin", async () => {
    const lock = join(dir, "director.lock");
    symlinkSync(join(dir, "nowhere"), lock);
    const r = await acquireInChild(dir, lock, 60_000);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/^refused: state: .*director\.lock: a symbolic link where the lock/);
  });
});
