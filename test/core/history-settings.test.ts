/**
 * The settings a commit changed, read from the text of its CI workflows, Dockerfiles, compose
 * files, environment templates and `.npmrc` (core/history/settings.ts), and what the import
 * makes of them: a reason, never a decision by itself (the corpus README's tenth round).
 * Invented cases.
 */
import { describe, expect, it } from "vitest";
import { classifyMessage } from "../../src/core/history/git-events.js";
import {
  readsSettings,
  type SettingChange,
  settingChanges,
} from "../../src/core/history/settings.js";
import {
  CORPUS_HISTORIES,
  type Corpus,
  importedDecisions,
  loadCorpus,
} from "../support/history-corpus.js";

const wf = ".github/workflows/ci.yml";
const one = (path: string, before?: string, after?: string) =>
  settingChanges([
    {
      path,
      ...(before !== undefined ? { before } : {}),
      ...(after !== undefined ? { after } : {}),
    },
  ]);

/** A GitHub Actions expression, `${{ e }}`. */
const expr = (e: string) => ["$", "{{ ", e, " }}"].join("");

const steps = (...lines: string[]) =>
  ["on: push", "jobs:", "  test:", "    runs-on: ubuntu-latest", "    steps:", ...lines].join("\n");

describe("which files are read", () => {
  it("reads workflows, Dockerfiles, compose files, environment templates and .npmrc", () => {
    for (const path of [
      wf,
      "Dockerfile",
      "docker/app.Dockerfile",
      "docker-compose.yml",
      "compose.prod.yaml",
      ".env.example",
      ".npmrc",
    ]) {
      expect(readsSettings(path), path).toBe(true);
    }
  });

  it("leaves out examples' and tests' files, and workflows' helpers", () => {
    for (const path of [
      "examples/app/Dockerfile",
      "test/fixtures/docker-compose.yml",
      ".github/workflows/scripts/run.sh",
      "src/index.ts",
      "docs/.npmrc",
    ]) {
      expect(readsSettings(path), path).toBe(false);
    }
  });
});

describe("what a workflow's diff says", () => {
  it("reads actions pinned from a tag to a full SHA, not a tag bumped", () => {
    const sha = "11bd71901bbe5b1630ceea73d27597364c9af683";
    expect(
      one(
        wf,
        steps("      - uses: actions/checkout@v4"),
        steps(`      - uses: actions/checkout@${sha} # v4`),
      ),
    ).toEqual(["actions-pinned"]);
    expect(
      one(
        wf,
        steps("      - uses: actions/checkout@v3"),
        steps("      - uses: actions/checkout@v4"),
      ),
    ).toBeUndefined();
  });

  it("reads a runtime version dropped from the matrix, inline or as a block list", () => {
    const inline = (versions: string) =>
      steps(`    strategy:\n      matrix:\n        node-version: [${versions}]`);
    expect(one(wf, inline("18, 20, 22"), inline("20, 22"))).toEqual(["runtime-dropped"]);
    // One added is no support ended.
    expect(one(wf, inline("20, 22"), inline("20, 22, 24"))).toBeUndefined();
    const block = (...v: string[]) =>
      steps(
        `    strategy:\n      matrix:\n        python-version:\n${v.map((x) => `          - "${x}"`).join("\n")}`,
      );
    expect(one(wf, block("3.9", "3.12"), block("3.12"))).toEqual(["runtime-dropped"]);
    // A version read from a variable names none.
    expect(
      one(
        wf,
        steps(`      - run: node-version: ${expr("matrix.node")}`),
        steps("      - run: echo"),
      ),
    ).toBeUndefined();
  });

  it("reads a job guarded to the project's own repository or off forks", () => {
    expect(
      one(
        wf,
        steps("      - run: npm publish"),
        steps("      - if: github.repository == 'acme/app'", "        run: npm publish"),
      ),
    ).toContain("runs-guarded");
    expect(
      one(
        wf,
        steps("      - run: x"),
        steps(`      - if: ${expr("!github.event.pull_request.head.repo.fork")}`, "        run: x"),
      ),
    ).toEqual(["runs-guarded"]);
  });

  it("reads publishing, permissions, and actions adopted and dropped", () => {
    expect(
      one(
        wf,
        steps(
          "      - uses: docker/build-push-action@v6",
          "        with:",
          "          platforms: linux/amd64",
        ),
        steps(
          "      - uses: docker/build-push-action@v6",
          "        with:",
          "          platforms: linux/amd64,linux/arm64",
        ),
      ),
    ).toEqual(["publishing-changed"]);
    expect(
      one(
        wf,
        steps("      - run: x"),
        `permissions:\n  contents: read\n${steps("      - run: x")}`,
      ),
    ).toEqual(["permissions-changed"]);
    expect(
      one(
        wf,
        steps("      - uses: codecov/codecov-action@v4"),
        steps("      - uses: zizmorcore/zizmor-action@v1"),
      ),
    ).toEqual(["ci-action-adopted", "ci-action-dropped"]);
  });

  it("says nothing of a workflow added or deleted whole but the actions it uses", () => {
    expect(one(wf, undefined, steps("      - run: npm publish --provenance"))).toBeUndefined();
    expect(one(wf, steps("      - uses: acme/lint@v1"), undefined)).toEqual(["ci-action-dropped"]);
  });
});

describe("what deployment and install files say", () => {
  it("reads a base image switched, not a tag bumped or a stage named", () => {
    const df = (from: string) => `FROM ${from} AS build\nRUN make\nFROM build AS final\n`;
    expect(one("Dockerfile", df("node:20-alpine"), df("node:22-alpine"))).toBeUndefined();
    expect(one("Dockerfile", df("node:20-alpine"), df("gcr.io/distroless/nodejs22"))).toEqual([
      "base-image-switched",
    ]);
  });

  it("reads settings added and removed in an environment template or a compose file", () => {
    expect(
      one(
        ".env.example",
        "DATABASE_URL=\nPORT=3000\n",
        "DATABASE_URL=\n# PORT=3000\nSECRET_KEY=\n",
      ),
    ).toEqual(["setting-added"]);
    expect(
      one(
        "docker-compose.yml",
        "services:\n  app:\n    environment:\n      - DEBUG=1\n",
        "services:\n  app:\n    environment: {}\n",
      ),
    ).toEqual(["setting-removed"]);
  });

  it("reads a line of .npmrc set", () => {
    expect(one(".npmrc", "", "ignore-scripts = true\n")).toEqual(["install-policy"]);
    expect(one(".npmrc", "save-exact=true\n", "# pinned\nsave-exact = true\n")).toBeUndefined();
  });
});

describe("what the import makes of them", () => {
  it("changes no call on any labelled history, only reasons", () => {
    let read = 0;
    for (const name of [...CORPUS_HISTORIES, "gotify", "excalidraw"]) {
      const corpus = loadCorpus(name);
      read += corpus.commits.filter((c) => c.settings !== undefined).length;
      const bare = {
        ...corpus,
        commits: corpus.commits.map(({ settings, ...c }) => c),
      };
      const calls = (c: Corpus) =>
        [...importedDecisions(c)].map(([sha, d]) => `${sha} ${d.title} ${d.confidence}`);
      expect(calls(corpus), name).toEqual(calls(bare));
    }
    expect(read).toBeGreaterThan(100);
  });

  const read = (message: string, settings: SettingChange[], parents = 1) =>
    classifyMessage({
      message,
      parents,
      author: "someone <someone@example.com>",
      changes: { paths: [{ status: "M", path: wf }], settings },
    }).cls;

  it("makes no decision of a setting alone: the tenth round's rules did not carry", () => {
    expect(read("Updated workflow.", ["runs-guarded"]).decision).toBeUndefined();
    const message = "ci: use full SHAs for github action versions";
    const { rationale, ...pinned } = read(message, ["actions-pinned"]).decision ?? {};
    expect(rationale).toBe("CI actions pinned to commit SHAs");
    expect(pinned).toEqual(read(message, []).decision);
    expect(read("Merge remote-tracking branch 'origin/master'", ["runs-guarded"], 2).noise).toBe(
      "merge",
    );
  });

  it("gives a decision the words leave unexplained what the settings show", () => {
    const decision = read("ci: drop Node.js 18", ["actions-pinned", "runtime-dropped"]).decision;
    expect(decision?.rationale).toBe(
      "CI actions pinned to commit SHAs; a runtime version dropped from CI",
    );
    // A reason the words give is kept.
    expect(
      read("ci: drop Node.js 18 because it reached its end of life", ["runtime-dropped"]).decision
        ?.rationale,
    ).toMatch(/end of life/);
  });
});
