import { existsSync, promises, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { base, openRepo } from "../../src/git/history.js";
import { objectFs } from "../../src/git/object-fs.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** Bytes that arrive in two chunks and then fail: a writer killed half-way. */
async function* failingHalfWay(): AsyncGenerator<Uint8Array> {
  yield Buffer.from("first half of an object");
  throw new Error("killed");
}

describe("the file system isomorphic-git writes objects through", () => {
  it("is the one every isomorphic-git call on a repository takes", async () => {
    const repo = await openRepo(dirs.repo("engram-objfs-").dir);
    expect(base(repo).fs).toBe(objectFs);
  });

  it("leaves nothing at the path when a write stops half-way, where a plain write leaves a torn file", async () => {
    const dir = dirs.dir("engram-objfs-torn-");
    const plain = join(dir, "plain");
    await expect(
      promises.writeFile(plain, failingHalfWay() as unknown as Uint8Array),
    ).rejects.toThrow("killed");
    expect(readFileSync(plain, "utf8")).toBe("first half of an object"); // the failure we guard
    const guarded = join(dir, "guarded");
    await expect(
      objectFs.promises.writeFile(guarded, failingHalfWay() as unknown as Uint8Array),
    ).rejects.toThrow("killed");
    expect(existsSync(guarded)).toBe(false);
    expect(readdirSync(dir)).toEqual(["plain"]); // no temp file left behind
    await objectFs.promises.writeFile(guarded, "whole");
    expect(readFileSync(guarded, "utf8")).toBe("whole");
  });
});
