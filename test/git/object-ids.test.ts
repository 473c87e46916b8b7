/**
 * Trees written in process (object-ids.ts) are the very objects isomorphic-git and git write:
 * same ids, and `git fsck` finds nothing wrong with them.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import git from "isomorphic-git";
import { afterAll, describe, expect, it } from "vitest";
import { openRepo } from "../../src/git/history.js";
import {
  batchedObjects,
  writeCommitFast,
  writeTextBlobFast,
  writeTreeFast,
} from "../../src/git/object-ids.js";
import { graftTree } from "../../src/git/objects.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("trees written in process", () => {
  it("have the ids isomorphic-git gives them, and a graft reads back what it wrote", async () => {
    const repo = dirs.repo("engram-object-ids-");
    const opened = await openRepo(repo.dir);
    const blob = (text: string) => writeTextBlobFast(opened, text);
    // Names whose order differs between plain and folder comparison ("a-b" < "a/" < "a0").
    const sub = writeTreeFast(opened, [
      { mode: "100644", path: "x.json", oid: blob("x"), type: "blob" },
    ]);
    const entries = [
      { mode: "100644", path: "a0", oid: blob("a0"), type: "blob" as const },
      { mode: "040000", path: "a", oid: sub, type: "tree" as const },
      { mode: "100644", path: "a-b", oid: blob("a-b"), type: "blob" as const },
      { mode: "100755", path: "run.sh", oid: blob("#!/bin/sh"), type: "blob" as const },
    ];
    const ours = writeTreeFast(opened, entries);
    const theirs = await git.writeTree({ fs, gitdir: opened.gitdir, tree: entries });
    expect(ours).toBe(theirs);

    const grafted = await graftTree(
      opened,
      ours,
      new Map([
        ["a/y.json", { type: "blob" as const, oid: blob("y") }],
        ["a0", null],
      ]),
    );
    const read = await git.readTree({ fs, gitdir: opened.gitdir, oid: grafted });
    expect(read.tree.map((e) => e.path).sort()).toEqual(["a", "a-b", "run.sh"]);
    // The cache lists it as a read from disk does.
    expect(opened.trees.get(grafted)).toEqual(read.tree);
    const folder = read.tree.find((e) => e.path === "a");
    const inner = await git.readTree({ fs, gitdir: opened.gitdir, oid: folder?.oid ?? "" });
    expect(inner.tree.map((e) => e.path)).toEqual(["x.json", "y.json"]);
    // git's own check of every object, their entries' order included.
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo.dir, stdio: "pipe" });
    // And the graft is the tree git itself makes of the same entries.
    const listed = execFileSync("git", ["ls-tree", grafted], { cwd: repo.dir, encoding: "utf8" });
    const remade = execFileSync("git", ["mktree"], {
      cwd: repo.dir,
      input: listed,
      encoding: "utf8",
    });
    expect(remade.trim()).toBe(grafted);
  });

  it("stores each blob whole, loose or packed, whatever the sizes before it", async () => {
    const repo = dirs.repo("engram-object-ids-");
    const opened = await openRepo(repo.dir);
    // Large ones (past the buffer objects are laid out in) between small ones, multi-byte text.
    const texts = ["small", "ü✓".repeat(200_000), "after the large one", "x".repeat(300_000), ""];
    const packedTexts = Array.from(
      { length: 120 },
      (_, i) => `${i} ${texts[i % 30 === 1 ? 1 : 0]}`,
    );
    const oids = texts.map((text) => writeTextBlobFast(opened, text));
    oids.push(
      ...(await batchedObjects(opened, async () =>
        packedTexts.map((text) => writeTextBlobFast(opened, text)),
      )),
    );
    const all = [...texts, ...packedTexts];
    const blobId = (text: string) => {
      const body = Buffer.from(text, "utf8");
      return createHash("sha1").update(`blob ${body.length}\0`).update(body).digest("hex");
    };
    expect(oids).toEqual(all.map(blobId));
    // Read back by git, loose objects and the pack alike.
    const out = execFileSync("git", ["cat-file", "--batch"], {
      cwd: repo.dir,
      input: `${oids.join("\n")}\n`,
      maxBuffer: 64 * 1024 * 1024,
    });
    let at = 0;
    const read: string[] = [];
    while (at < out.length) {
      const eol = out.indexOf(10, at);
      const size = Number(out.toString("latin1", at, eol).split(" ")[2]);
      read.push(out.toString("utf8", eol + 1, eol + 1 + size));
      at = eol + 1 + size + 1;
    }
    expect(read).toEqual(all);
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo.dir, stdio: "pipe" });
  });

  it("commits have the ids isomorphic-git gives them", async () => {
    const repo = dirs.repo("engram-object-ids-");
    const opened = await openRepo(repo.dir);
    const tree = writeTreeFast(opened, [
      { mode: "100644", path: "f", oid: writeTextBlobFast(opened, "f"), type: "blob" },
    ]);
    const author = { name: "engram", email: "engram@localhost", timestamp: 1_763_856_000 };
    let parents: string[] = [];
    for (const message of ["first", "second\n\nEngram-Version: 2\n", "naïve — ünïcode ✓"]) {
      const ours = writeCommitFast(opened, { tree, parents, message, author });
      const theirs = await git.writeCommit({
        fs,
        gitdir: opened.gitdir,
        commit: {
          tree,
          parent: parents,
          message: message.endsWith("\n") ? message : `${message}\n`,
          author: { ...author, timezoneOffset: 0 },
          committer: { ...author, timezoneOffset: 0 },
        },
      });
      expect(ours).toBe(theirs);
      parents = [...parents, ours];
    }
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo.dir, stdio: "pipe" });
  });
});
