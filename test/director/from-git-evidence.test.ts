/**
 * `ingest --from-git` reads each commit's paths with their status (one `git log
 * --name-status`), and the classifier weighs its decisions by them: the same words are a
 * decision over a CI file deleted and none over source alone.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classifyHistory } from "../../src/core/history/git-events.js";
import { logRange } from "../../src/git/log.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("ingest --from-git reads what each commit changed", () => {
  it("gives each path its status, and weighs decisions by the paths", async () => {
    const repo = dirs.repo("engram-from-git-evidence-");
    const commit = (message: string) => {
      git(repo.dir, ["add", "-A"]);
      git(repo.dir, ["commit", "-q", "-m", message]);
    };
    repo.write("src/index.ts", "export const a = 1;\n");
    repo.write(".github/workflows/coverage.yml", "on: push\n");
    repo.write("codecov.yml", "coverage: {}\n");
    commit("Start");
    rmSync(join(repo.dir, "codecov.yml"));
    repo.write(".github/workflows/coverage.yml", "on: pull_request\n");
    commit("Remove code coverage upload");
    repo.write("src/index.ts", "export const a = 2;\n");
    commit("Remove code coverage upload from the report helper");
    repo.write("docs/guide.md", "Switch to c8 for coverage.\n");
    commit("Switch to c8 for code coverage");

    const commits = await logRange(repo.dir, "main");
    const dropped = commits[1]?.changes?.paths ?? [];
    expect(dropped).toContainEqual({ status: "D", path: "codecov.yml" });
    expect(dropped).toContainEqual({ status: "M", path: ".github/workflows/coverage.yml" });
    expect(commits[0]?.changes?.paths).toContainEqual({ status: "A", path: "src/index.ts" });
    expect(commits[1]?.files).toEqual([".github/workflows/coverage.yml", "codecov.yml"]);

    const read = classifyHistory(commits);
    // A tool's configuration deleted: a decision by its paths, above the line.
    expect(read[1]?.cls.decision?.title).toBe("Remove code coverage upload");
    expect(read[1]?.cls.decision?.confidence).toBe(0.7);
    // The same words over source alone: no decision.
    expect(read[2]?.cls.decision).toBeUndefined();
    // A choice stated, but only in the docs: weighed down to the line.
    expect(read[3]?.cls.decision?.confidence).toBe(0.6);
  });
});
