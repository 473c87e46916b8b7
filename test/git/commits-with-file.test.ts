/** One `git cat-file --batch` gives the candidates' commits, their times and a file in them. */
import { afterAll, describe, expect, it } from "vitest";
import { commitsWithFile } from "../../src/git/rev-reads.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("commitsWithFile", () => {
  it("reads each revision's commit and time, and the file where asked and present", async () => {
    const repo = dirs.repo("engram-batch-");
    repo.write("memory/catalog.json", '{"v":1}\n');
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "one"]);
    git(repo.dir, ["tag", "-a", "-m", "t", "v1"]);
    git(repo.dir, ["checkout", "-q", "-b", "side"]);
    git(repo.dir, ["rm", "-q", "memory/catalog.json"]);
    git(repo.dir, ["commit", "-q", "-m", "two"]);
    const rev = (r: string) => git(repo.dir, ["rev-parse", `${r}^{commit}`]).trim();
    const time = (r: string) => Number(git(repo.dir, ["log", "-1", "--format=%ct", r]).trim());

    const found = await commitsWithFile(repo.dir, ["v1", "side", "nope", "-x", "HEAD"], {
      path: "memory/catalog.json",
      revs: ["v1", "side", "nope", "-x"],
    });
    expect(found).toEqual([
      { sha: rev("v1"), time: time("v1"), text: '{"v":1}\n' }, // a tag, peeled
      { sha: rev("side"), time: time("side"), text: undefined }, // no such file there
      undefined, // no such revision
      undefined, // not asked: git could read it as an option
      { sha: rev("HEAD"), time: time("HEAD"), text: undefined }, // the file not asked
    ]);
    expect(await commitsWithFile(dirs.dir("engram-not-repo-"), ["main"])).toBeUndefined();
  });
});
