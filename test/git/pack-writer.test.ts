/**
 * Objects gathered in a batch and written as one pack (pack-writer.ts) are the objects git
 * itself reads: `git verify-pack` and `git fsck` pass, each object has the id and content of
 * the same object written loose, and the in-process git library reads them. Refs read and
 * written straight in the git directory (refs.ts) agree with git, loose and packed.
 */
import { execFileSync } from "node:child_process";
import fs, { readdirSync } from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import { afterAll, describe, expect, it } from "vitest";
import { openRepo } from "../../src/git/history.js";
import {
  batchedObjects,
  writeCommitFast,
  writeTextBlobFast,
  writeTextTreeFast,
} from "../../src/git/object-ids.js";
import { crc32 } from "../../src/git/pack-writer.js";
import { readPlainRef, writePlainRef } from "../../src/git/refs.js";
import { git as gitCli, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const looseCount = (gitdir: string) =>
  readdirSync(join(gitdir, "objects"))
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .reduce((n, d) => n + readdirSync(join(gitdir, "objects", d)).length, 0);
const packFiles = (gitdir: string) => {
  const dir = join(gitdir, "objects", "pack");
  return fs.existsSync(dir) ? readdirSync(dir).sort() : [];
};

/** Blobs of every size class (a pack entry's size takes one to four header bytes), trees, a commit. */
function writeSome(repo: Awaited<ReturnType<typeof openRepo>>, n: number): string[] {
  const oids: string[] = [];
  for (let i = 0; i < n; i++) {
    const text = `${"x".repeat(i === 7 ? 300_000 : i * i * 3)}file ${i} ✓\n`;
    oids.push(writeTextBlobFast(repo, text));
  }
  // The same content twice is one object.
  oids.push(writeTextBlobFast(repo, "file 0 ✓\n"));
  const tree = writeTextTreeFast(
    repo,
    Array.from({ length: n }, (_, i) => ({ path: `dir${i % 3}/f${i}.txt`, text: `f${i}\n` })),
  );
  oids.push(tree);
  oids.push(
    writeCommitFast(repo, {
      tree,
      parents: [],
      message: "batched",
      author: { name: "engram", email: "engram@localhost", timestamp: 1_763_856_000 },
    }),
  );
  return oids;
}

describe("objects written as one pack", () => {
  it("are the objects written loose, read by git and the in-process library", async () => {
    const loose = await openRepo(dirs.repo("engram-pack-loose-").dir);
    const expected = writeSome(loose, 120);

    const repo = dirs.repo("engram-pack-");
    const packed = await openRepo(repo.dir);
    const before = looseCount(packed.gitdir);
    const oids = await batchedObjects(packed, async () => writeSome(packed, 120));
    expect(oids).toEqual(expected);
    // Nothing loose, one pack and its index.
    expect(looseCount(packed.gitdir)).toBe(before);
    const files = packFiles(packed.gitdir);
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^pack-[0-9a-f]{40}\.idx$/);

    const idx = join(packed.gitdir, "objects", "pack", files[0] as string);
    const verified = gitCli(repo.dir, ["verify-pack", "-v", idx]);
    expect(verified).toContain(": ok");
    gitCli(repo.dir, ["fsck", "--strict", "--no-dangling"]);
    for (const oid of new Set(oids)) {
      const there = execFileSync("git", ["cat-file", "-p", oid], { cwd: loose.dir });
      const here = execFileSync("git", ["cat-file", "-p", oid], { cwd: repo.dir });
      expect(here.equals(there), oid).toBe(true);
    }
    const { blob } = await git.readBlob({ fs, gitdir: packed.gitdir, oid: oids[5] as string });
    expect(Buffer.from(blob).toString("utf8")).toBe(`${"x".repeat(75)}file 5 ✓\n`);
    // A second batch of the same objects writes nothing: they are all stored.
    expect(await batchedObjects(packed, async () => writeSome(packed, 120))).toEqual(expected);
  });

  it("stay loose when fewer than git's unpack limit", async () => {
    const repo = dirs.repo("engram-pack-few-");
    const opened = await openRepo(repo.dir);
    const before = looseCount(opened.gitdir);
    const oids = await batchedObjects(opened, async () => writeSome(opened, 10));
    expect(packFiles(opened.gitdir)).toEqual([]);
    expect(looseCount(opened.gitdir)).toBeGreaterThan(before);
    for (const oid of oids) {
      expect(fs.existsSync(join(opened.gitdir, "objects", oid.slice(0, 2), oid.slice(2)))).toBe(
        true,
      );
    }
    gitCli(repo.dir, ["fsck", "--strict", "--no-dangling"]);
  });

  it("are written only when the batch ends, and not at all when it fails", async () => {
    const repo = dirs.repo("engram-pack-fail-");
    const opened = await openRepo(repo.dir);
    const before = looseCount(opened.gitdir);
    let inside: string[] = [];
    await expect(
      batchedObjects(opened, async () => {
        inside = writeSome(opened, 120);
        expect(looseCount(opened.gitdir)).toBe(before);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(inside.length).toBeGreaterThan(100);
    expect(packFiles(opened.gitdir)).toEqual([]);
    expect(looseCount(opened.gitdir)).toBe(before);
  });

  it("hold large versions of one file as deltas of the first, read back whole", async () => {
    const versions = Array.from({ length: 4 }, (_, v) => {
      const lines = Array.from({ length: 3000 }, (_, i) => `  {"id": "e_${i * 7919}", "n": ${i}},`);
      return `{"version": ${v + 9},\n${lines.join("\n")}\n"documents": [${"1,".repeat(v)}0]}\n`;
    });
    const repo = dirs.repo("engram-pack-delta-");
    const opened = await openRepo(repo.dir);
    const oids = await batchedObjects(opened, async () => [
      ...versions.map((text) => writeTextBlobFast(opened, text, "memory/catalog.json")),
      writeTextBlobFast(opened, "small\n", "memory/catalog.json"),
    ]);
    // Few objects, but packed: a loose object cannot be a delta.
    const files = packFiles(opened.gitdir);
    expect(files).toHaveLength(2);
    const idx = join(opened.gitdir, "objects", "pack", files[0] as string);
    const verified = gitCli(repo.dir, ["verify-pack", "-v", idx]);
    expect(verified).toContain("chain length = 1: 3 objects");
    gitCli(repo.dir, ["fsck", "--strict", "--no-dangling"]);
    const pack = fs.statSync(idx.replace(/\.idx$/, ".pack")).size;
    expect(pack).toBeLessThan(versions[0]?.length ?? 0);
    for (const [i, text] of [...versions, "small\n"].entries()) {
      const oid = oids[i] as string;
      expect(execFileSync("git", ["cat-file", "-p", oid], { cwd: repo.dir }).toString()).toBe(text);
      const { blob } = await git.readBlob({ fs, gitdir: opened.gitdir, oid });
      expect(Buffer.from(blob).toString("utf8")).toBe(text);
    }
  });

  it("past git's unpack limit, keep every object compressed but deltas and their bases, read back whole", async () => {
    // Versions of one large file among many small objects: once the batch is sure to be a
    // pack (100 objects), the small ones are kept as the pack stores them; the versions stay
    // whole until the pack is written, so they can still be deltas of the first.
    const versions = Array.from({ length: 3 }, (_, v) => {
      const lines = Array.from({ length: 3000 }, (_, i) => `  {"id": "e_${i * 31}", "n": ${i}},`);
      return `{"version": ${v + 2},\n${lines.join("\n")}\n"tail": ${v}}\n`;
    });
    const repo = dirs.repo("engram-pack-late-delta-");
    const opened = await openRepo(repo.dir);
    const oids = await batchedObjects(opened, async () => [
      writeTextBlobFast(opened, versions[0] as string, "memory/catalog.json"),
      ...writeSome(opened, 110),
      ...versions.slice(1).map((text) => writeTextBlobFast(opened, text, "memory/catalog.json")),
    ]);
    const files = packFiles(opened.gitdir);
    expect(files).toHaveLength(2);
    const idx = join(opened.gitdir, "objects", "pack", files[0] as string);
    expect(gitCli(repo.dir, ["verify-pack", "-v", idx])).toContain("chain length = 1: 2 objects");
    gitCli(repo.dir, ["fsck", "--strict", "--no-dangling"]);
    expect(looseCount(opened.gitdir)).toBe(0);
    const last = oids.length - 1;
    for (const [i, text] of [
      [0, versions[0]],
      [last - 1, versions[1]],
      [last, versions[2]],
    ] as const) {
      const oid = oids[i] as string;
      expect(execFileSync("git", ["cat-file", "-p", oid], { cwd: repo.dir }).toString()).toBe(text);
    }
  });

  it("carry the CRC-32 zlib computes", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
  });
});

describe("refs read and written in the git directory", () => {
  it("agree with git, loose and packed", () => {
    const repo = dirs.repo("engram-refs-");
    repo.write("a.txt", "a\n");
    gitCli(repo.dir, ["add", "-A"]);
    gitCli(repo.dir, ["commit", "-qm", "a"]);
    const first = gitCli(repo.dir, ["rev-parse", "HEAD"]).trim();
    repo.write("b.txt", "b\n");
    gitCli(repo.dir, ["add", "-A"]);
    gitCli(repo.dir, ["commit", "-qm", "b"]);
    const second = gitCli(repo.dir, ["rev-parse", "HEAD"]).trim();
    const gitdir = join(repo.dir, ".git");

    expect(readPlainRef(gitdir, "refs/tags/engram/v1")).toBeUndefined();
    writePlainRef(gitdir, "refs/tags/engram/v1", first);
    expect(gitCli(repo.dir, ["rev-parse", "engram/v1"]).trim()).toBe(first);
    expect(readPlainRef(gitdir, "refs/tags/engram/v1")).toBe(first);

    // Packed by git: read from packed-refs; a new loose ref wins over the packed line.
    gitCli(repo.dir, ["tag", "engram/v2", second]);
    gitCli(repo.dir, ["pack-refs", "--all"]);
    expect(fs.existsSync(join(gitdir, "refs/tags/engram/v2"))).toBe(false);
    expect(readPlainRef(gitdir, "refs/tags/engram/v2")).toBe(second);
    writePlainRef(gitdir, "refs/tags/engram/v2", first);
    expect(readPlainRef(gitdir, "refs/tags/engram/v2")).toBe(first);
    expect(gitCli(repo.dir, ["rev-parse", "engram/v2"]).trim()).toBe(first);
    // No lock or temp file left: git lists exactly the two tags.
    expect(gitCli(repo.dir, ["tag", "--list"]).trim().split("\n")).toEqual([
      "engram/v1",
      "engram/v2",
    ]);
    // A symbolic ref is not a plain one.
    expect(readPlainRef(gitdir, "HEAD")).toBeUndefined();
    expect(() => writePlainRef(gitdir, "refs/tags/x", "not-an-id")).toThrow(TypeError);
  });
});
