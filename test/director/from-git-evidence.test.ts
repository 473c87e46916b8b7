/**
 * `ingest --from-git` reads each commit's paths with their status (one `git log --raw`), the
 * dependencies its manifests added and removed, the settings its workflows and deployment files
 * changed, and, where it deleted source, its lines added and deleted; the classifier weighs its
 * decisions by them: the same words are a decision over a CI file deleted and none over source
 * alone.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classifyHistory } from "../../src/core/history/git-events.js";
import { MAX_READ_BYTES } from "../../src/git/content-reads.js";
import { logRange } from "../../src/git/log.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** Commits everything in the work tree. */
function commitAll(dir: string, message: string, author?: string): void {
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "-m", message, ...(author ? [`--author=${author}`] : [])]);
}

describe("ingest --from-git reads what each commit changed", () => {
  it("gives each path its status, and weighs decisions by the paths", async () => {
    const repo = dirs.repo("engram-from-git-evidence-");
    const commit = (message: string) => commitAll(repo.dir, message);
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

  it("counts the lines, so a part taken out is told from a part reworked", async () => {
    const repo = dirs.repo("engram-from-git-lines-");
    const commit = (message: string) => commitAll(repo.dir, message);
    const legacy = Array.from({ length: 60 }, (_, i) => `export const step${i} = ${i};`);
    repo.write("src/legacy/importer.ts", `${legacy.join("\n")}\n`);
    repo.write("src/index.ts", 'export * from "./legacy/importer.js";\n');
    repo.write("CHANGELOG.md", "# Changes\n");
    repo.write("logo.png", "\u0000\u0001binary\u0000");
    commit("Start");
    rmSync(join(repo.dir, "src/legacy/importer.ts"));
    repo.write("src/index.ts", "export {};\n");
    repo.write("CHANGELOG.md", "# Changes\n\n- The legacy importer is gone.\n");
    repo.write("logo.png", "\u0000\u0002binary\u0000");
    commit("Remove the legacy importer");

    const commits = await logRange(repo.dir, "main");
    // Only a commit that deleted source is counted; a binary file counts no lines.
    expect(commits[0]?.changes?.added).toBeUndefined();
    expect(commits[1]?.changes).toMatchObject({ added: 3, deleted: 61 });
    expect(commits[1]?.changes?.paths).toContainEqual({
      status: "D",
      path: "src/legacy/importer.ts",
    });
    expect(commits[1]?.changes?.paths).toContainEqual({ status: "M", path: "logo.png" });
    // Source files deleted in a change that is mostly deletion, announced: a part removed.
    expect(classifyHistory(commits)[1]?.cls.decision?.confidence).toBe(0.7);
  });

  it("reads what the manifests added and removed, not a bot's, not an example's", async () => {
    const repo = dirs.repo("engram-from-git-deps-");
    const commit = (message: string, author?: string) => commitAll(repo.dir, message, author);
    const pkg = (deps: Record<string, string>) =>
      `${JSON.stringify({ name: "app", dependencies: deps }, null, 2)}\n`;
    repo.write("package.json", pkg({ yup: "^1.0.0", react: "^18.0.0" }));
    repo.write("examples/demo/package.json", pkg({ left: "1" }));
    repo.write("src/form.ts", "export const schema = 1;\n");
    commit("Start");
    repo.write("package.json", pkg({ zod: "^3.0.0", react: "^18.3.0" }));
    repo.write("src/form.ts", "export const schema = 2;\n");
    commit("Switch form validation to zod");
    repo.write("package.json", pkg({ valibot: "^1.0.0", react: "^18.3.0" }));
    commit("Bump things", "dependabot[bot] <bot@example.invalid>");
    repo.write("examples/demo/package.json", pkg({ right: "1" }));
    commit("Refresh the demo");

    const commits = await logRange(repo.dir, "main");
    expect(commits[0]?.changes?.dependencies).toEqual({
      added: ["react", "yup"],
      removed: [],
    });
    expect(commits[1]?.changes?.dependencies).toEqual({ added: ["zod"], removed: ["yup"] });
    expect(commits[2]?.changes?.dependencies).toBeUndefined();
    expect(commits[3]?.changes?.dependencies).toBeUndefined();
    const read = classifyHistory(commits);
    // The words make the decision; the manifest gives the reason they leave out.
    expect(read[1]?.cls.decision?.title).toBe("Switch form validation to zod");
    expect(read[1]?.cls.decision?.rationale).toBe("adopted zod; dropped yup");
    expect(read[3]?.cls.decision).toBeUndefined();
  });

  it("never reads a manifest larger than its bound, on either side", async () => {
    const repo = dirs.repo("engram-from-git-huge-");
    const commit = (message: string) => commitAll(repo.dir, message);
    const pkg = (deps: Record<string, string>, pad = "") =>
      `${JSON.stringify({ name: "app", description: pad, dependencies: deps })}\n`;
    repo.write("package.json", pkg({ yup: "1" }));
    commit("Start");
    repo.write("package.json", pkg({ zod: "3" }, "x".repeat(MAX_READ_BYTES)));
    commit("Switch validation to zod");
    repo.write("package.json", pkg({ valibot: "1" }));
    commit("Switch validation to valibot");
    repo.write("package.json", pkg({ arktype: "2" }));
    commit("Switch validation to arktype");

    const commits = await logRange(repo.dir, "main");
    expect(commits[1]?.changes?.dependencies).toBeUndefined();
    expect(commits[2]?.changes?.dependencies).toBeUndefined();
    expect(commits[3]?.changes?.dependencies).toEqual({ added: ["arktype"], removed: ["valibot"] });
  });

  it("reads what the workflows changed, within the bounds, as a reason", async () => {
    const repo = dirs.repo("engram-from-git-settings-");
    const commit = (message: string, author?: string) => commitAll(repo.dir, message, author);
    const publish = (guard: string) =>
      [
        "on: push",
        "jobs:",
        "  publish:",
        "    runs-on: ubuntu-latest",
        guard,
        "    steps:",
        "      - run: npm publish",
        "",
      ].join("\n");
    repo.write(".github/workflows/publish.yml", publish(""));
    commit("Start");
    repo.write(".github/workflows/publish.yml", publish("    if: github.repository == 'acme/app'"));
    commit("ci: only publish from the main repository");
    repo.write(".github/workflows/publish.yml", publish(""));
    commit("Bump things", "renovate[bot] <bot@example.invalid>");
    // Nine workflows in one commit: a mass edit, not read.
    for (let i = 0; i < 9; i++) repo.write(`.github/workflows/w${i}.yml`, publish(""));
    commit("Add workflows");
    for (let i = 0; i < 9; i++) {
      repo.write(`.github/workflows/w${i}.yml`, publish("    if: github.repository == 'acme/app'"));
    }
    commit("Tidy the workflows");
    // A workflow over the size bound is never read.
    repo.write(
      ".github/workflows/publish.yml",
      `${publish("    if: github.repository == 'acme/app'")}# ${"x".repeat(MAX_READ_BYTES)}\n`,
    );
    commit("Touch the publish workflow");

    const commits = await logRange(repo.dir, "main");
    expect(commits[1]?.changes?.settings).toEqual(["runs-guarded"]);
    expect(commits[2]?.changes?.settings).toBeUndefined();
    expect(commits[4]?.changes?.settings).toBeUndefined();
    expect(commits[5]?.changes?.settings).toBeUndefined();
    const read = classifyHistory(commits);
    // The words make the decision; the workflow gives the reason they leave out.
    expect(read[1]?.cls.decision?.title).toBe("only publish from the main repository");
    expect(read[1]?.cls.decision?.rationale).toMatch(/own repository/);
    expect(read[4]?.cls.decision).toBeUndefined();
  });
});
