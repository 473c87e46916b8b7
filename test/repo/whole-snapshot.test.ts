/**
 * A version snapshot written whole (the first version of a large memory) is one git pack, not
 * a loose file per object, and git reads it as the same snapshot.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { VersionRecord } from "../../src/core/versions/log.js";
import { openRepo } from "../../src/git/history.js";
import { readSnapshot, recordVersion } from "../../src/repo/version-snapshots.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

function looseObjects(gitdir: string): string[] {
  const objects = join(gitdir, "objects");
  return readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(objects, d)).map((f) => d + f));
}

describe("a version snapshot written whole", () => {
  it("stores its objects as one pack, then moves its tag to a commit git reads back", async () => {
    const repo = dirs.repo("engram-whole-snapshot-");
    const gitdir = join(repo.dir, ".git");
    const before = looseObjects(gitdir);
    const files = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      files.set(
        `memory/st/20261127-100000Z/engram_e_${String(i).padStart(32, "0")}.json`,
        `{"n":${i}}\n`,
      );
    }
    files.set("memory/catalog.json", '{"entries":[]}\n');
    files.set("MEMORY.md", "# Memory\n");
    const record: VersionRecord = {
      version: 1,
      catalog_hash: `sha256:${"0".repeat(64)}`,
      created_at: "2026-11-27T10:00:00.000Z",
      made_by: { kind: "cycle" },
      counts: { core: 0, engrams: 300, episodes: 0, facts: 0, state: 0 },
    };
    const snapshot = await recordVersion(repo.dir, record, files);
    expect(snapshot?.tag).toBe("refs/tags/engram/v1");
    // Some 300 blobs and their trees: one pack and its index, no loose file for any of them.
    const packs = readdirSync(join(gitdir, "objects", "pack"));
    expect(packs.filter((p) => p.endsWith(".pack"))).toHaveLength(1);
    expect(packs.filter((p) => p.endsWith(".idx"))).toHaveLength(1);
    expect(looseObjects(gitdir)).toEqual(before);
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo.dir, stdio: "pipe" });
    const listed = execFileSync("git", ["ls-tree", "-r", "--name-only", "engram/v1"], {
      cwd: repo.dir,
      encoding: "utf8",
    });
    expect(listed.trim().split("\n").sort()).toEqual([...files.keys()].sort());
    const read = await readSnapshot(await openRepo(repo.dir), 1);
    expect(read?.commit).toBe(snapshot?.commit);
    expect(read?.files.get("memory/catalog.json")).toBe('{"entries":[]}\n');
  });
});
