/**
 * The README as a newcomer reads it: its first commands exist, and its five-minute tour,
 * taken verbatim from README.md, runs command by command in a new repository with an empty
 * HOME, `director` and `worker` on PATH as `npm link` puts them. Each command exits 0.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assertBuilt, ROOT } from "../support/bins.js";
import { git, TempDirs } from "../support/repo.js";
import {
  describeStep,
  linkBins,
  runShellSteps,
  shellBlockAfter,
  shellCommands,
} from "../support/shell-block.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const README = readFileSync(join(ROOT, "README.md"), "utf8");

describe("README.md", () => {
  it("starts with two commands that package.json defines", () => {
    const first = shellCommands(shellBlockAfter(README, "# engram"));
    expect(first.map((c) => c.replace(/\s+#.*$/, "").trim())).toEqual([
      "npm install && npm run demo",
      "npm test",
    ]);
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.demo).toBeDefined();
    expect(pkg.scripts.test).toBeDefined();
  });

  it("its five-minute tour runs verbatim in a new repository, every command exiting 0", () => {
    assertBuilt();
    const commands = shellCommands(shellBlockAfter(README, "## Five-minute tour"));
    expect(commands.length).toBeGreaterThan(10);
    const repo = dirs.repo("engram-tour-");
    const steps = runShellSteps(commands, {
      cwd: repo.dir,
      home: dirs.dir("engram-tour-home-"),
      binDir: linkBins(dirs.dir("engram-tour-bin-")),
    });
    const failed = steps.find((s) => s.status !== 0);
    expect(failed, describeStep(failed)).toBeUndefined();
    expect(steps).toHaveLength(commands.length);

    // What the tour promises, beyond exit codes.
    const output = (prefix: string) => steps.find((s) => s.command.startsWith(prefix))?.stdout;
    expect(JSON.parse(output("director ingest events.ndjson") ?? "")).toMatchObject({
      accepted: 2,
      quarantined: 0,
    });
    expect(output("director run  ")).toContain("nothing compacted: all 4 events are inside");
    expect(output("director run --flush")).toContain("compaction: flushed; 4 event(s)");
    expect(output('worker recall "how do we validate schemas?"')).toContain("Use zod for every schema");
    const proposal = JSON.parse(output("director run --pr") ?? "") as {
      proposal: { status: string };
    };
    expect(proposal.proposal.status).toBe("created");
    expect(git(repo.dir, ["log", "--format=%s", "engram/memory"])).toContain("engram: memory");
  });
});
