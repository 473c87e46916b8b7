/**
 * A folder where engram reads a file (a bad merge, a hand-made repository, a restored state
 * folder): the command stops with exit 3 and names the file. A read of a folder fails in
 * `read` with no path of its own, and the message used to say only "is a directory".
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { TempRepo } from "../support/repo.js";
import { dir, dirs, expectExit, initRepo, useCliHarness, wrk } from "./cli-harness.js";

useCliHarness();

describe("a folder where a file belongs", () => {
  it("is named in the error of every command that reads it", async () => {
    const repo = await initRepo();
    for (const text of ["one decision about the cache", "another about the queue"]) {
      expectExit(
        await wrk(repo, ["emit", "--kind", "decision", "--text", text, "--rationale", "why"]),
        0,
      );
    }
    expectExit(await dir(repo, ["run", "--flush"]), 0);

    const swap = (at: TempRepo, rel: string[]) => {
      rmSync(at.path(...rel), { recursive: true, force: true });
      mkdirSync(at.path(...rel), { recursive: true });
    };
    const cases: { file: string[]; shown: string; commands: string[][] }[] = [
      {
        file: ["memory", "catalog.json"],
        shown: "memory/catalog.json: is a directory",
        commands: [["run", "--flush"], ["status"]],
      },
      {
        file: ["MEMORY.md"],
        shown: "MEMORY.md: is a directory",
        commands: [["run", "--flush"], ["status"]],
      },
      {
        file: [".engram", "buffer", "journal.ndjson"],
        shown: ".engram/buffer/journal.ndjson: is a directory",
        commands: [["run", "--flush"], ["status"]],
      },
    ];
    for (const { file, shown, commands } of cases) {
      // Each case on its own copy of the repository.
      const copy = dirs.copy(repo);
      swap(copy, file);
      for (const args of commands) {
        const r = await dir(copy, args);
        expectExit(r, 3);
        expect(r.stderr).toContain(shown);
      }
    }

    // An engram file that is a folder: the reader says so, and how to set it aside.
    const batch = readdirSync(repo.path("memory", "st")).find((n) => /^\d{8}-\d{6}Z$/.test(n));
    expect(batch).toBeDefined();
    const engram = readdirSync(repo.path("memory", "st", batch as string)).find((n) =>
      n.startsWith("engram_"),
    );
    swap(repo, ["memory", "st", batch as string, engram as string]);
    const r = await wrk(repo, ["recall", "cache"]);
    expectExit(r, 3);
    expect(r.stderr).toContain(`memory/st/${batch}/${engram}: a folder, not a file`);
    expect(r.stderr).toContain("director set-aside");
  });
});
