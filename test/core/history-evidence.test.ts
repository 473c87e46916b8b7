/** What a commit changed, read as evidence for or against its message's decision. */
import { describe, expect, it } from "vitest";
import { classifyCommit } from "../../src/core/history/classify.js";
import { DECISION_LINE, decisionByEvidence } from "../../src/core/history/confidence.js";
import { type CommitChanges, pathKind, readEvidence } from "../../src/core/history/evidence.js";

const changes = (...files: string[]): CommitChanges => ({
  paths: files.map((f) => ({ status: f.slice(0, 1), path: f.slice(2) })),
});

describe("pathKind", () => {
  it("tells CI, manifests, tooling, policy, docs, tests and source apart", () => {
    expect(pathKind(".github/workflows/ci.yml")).toBe("ci");
    expect(pathKind("packages/cli/package.json")).toBe("manifest");
    expect(pathKind("pnpm-lock.yaml")).toBe("lockfile");
    expect(pathKind("eslint.config.mjs")).toBe("tooling");
    expect(pathKind(".changeset/config.json")).toBe("tooling");
    expect(pathKind("SECURITY.md")).toBe("policy");
    expect(pathKind("docs/adr/0001-use-esm.md")).toBe("record");
    expect(pathKind("documentation/2-options.md")).toBe("docs");
    expect(pathKind(".changeset/brave-eagles-pick.md")).toBe("changelog");
    expect(pathKind("test/fixtures/app/package.json")).toBe("test");
    // Where a file lives says more than its name.
    expect(pathKind("examples/jest/package.json")).toBe("example");
    expect(pathKind("src/lang/fr-FR.json")).toBe("locale");
    expect(pathKind("source/core/options.ts")).toBe("source");
  });
});

describe("readEvidence", () => {
  it("knows nothing of a commit without paths", () => {
    expect(readEvidence(undefined)).toBeUndefined();
    expect(readEvidence({ paths: [] })).toBeUndefined();
  });

  it("sees a tool set up or dropped, but not a configuration renamed", () => {
    expect(readEvidence(changes("D .codesandbox/ci.json", "M README.md"))?.setUpOrDropped).toBe(
      true,
    );
    const renamed = readEvidence(changes("D eslint.config.mjs", "A eslint.config.js"));
    expect(renamed?.setUpOrDropped).toBe(false);
    expect(renamed?.toolingOnly).toBe(true);
  });

  it("sees prose only, tests only, and a documented interface", () => {
    expect(readEvidence(changes("M README.md", "M docs/a.md"))?.proseOnly).toBe(true);
    expect(readEvidence(changes("M test/a.ts", "M README.md"))?.testsOnly).toBe(true);
    const api = readEvidence(changes("M source/options.ts", "M documentation/2-options.md"));
    expect(api?.documentedInterface).toBe(true);
    expect(api?.proseOnly).toBe(false);
  });
});

describe("confidence", () => {
  it("weighs a stated choice down where only docs changed, up where tooling did", () => {
    const subject = "Switch to c8 for code coverage";
    const inDocs = classifyCommit({ subject, body: "", changes: changes("M README.md") });
    const inTooling = classifyCommit({
      subject,
      body: "",
      changes: changes("M package.json", "M .github/workflows/main.yml"),
    });
    const unknown = classifyCommit({ subject, body: "" });
    expect(inDocs.decision?.confidence).toBe(0.6);
    expect(inTooling.decision?.confidence).toBe(0.9);
    expect(unknown.decision?.confidence).toBe(0.8);
  });

  it("puts a choice in a fix's subject below the line", () => {
    const c = classifyCommit({
      subject: "Fix it not using HTTP/2 connection reuse by default",
      body: "",
      changes: changes("M source/core/options.ts", "M test/https.ts"),
    });
    expect(c.decision?.confidence).toBeLessThan(DECISION_LINE);
  });

  it("proposes a fix's or a feature's choice that reached only code and tests; remembers it where users are told", () => {
    const subject = "fix: default labels to undefined";
    const code = changes("M src/index.ts", "M test/index.test.ts");
    const silent = classifyCommit({ subject, body: "", changes: code });
    expect(silent.decision?.confidence).toBe(0.55);
    const told = classifyCommit({
      subject,
      body: "",
      changes: changes("M src/index.ts", "M README.md"),
    });
    expect(told.decision?.confidence).toBeGreaterThanOrEqual(DECISION_LINE);
    // A feature's default over code alone is how the new thing is built: proposed too; with
    // its docs, users are told of the choice.
    const weigh = (subject: string, ...files: string[]) =>
      classifyCommit({ subject, body: "", changes: changes(...files) }).decision?.confidence ?? 0;
    expect(weigh("feat: add --strict, off by default", "M src/cli.ts", "M test/cli.test.ts")).toBe(
      0.55,
    );
    expect(weigh("Add a --strict flag, off by default", "M src/cli.ts")).toBe(0.55);
    expect(weigh("feat: add --strict, off by default", "M src/cli.ts", "M docs/cli.md")).toBe(0.8);
    // Neither a fix nor a feature: a choice over code alone stays a decision.
    expect(weigh("refactor: prefer Map over objects by default", "M src/a.ts")).toBe(0.8);
    // A breaking fix stays a decision whatever it changed.
    const breaking = classifyCommit({
      subject: "fix!: default labels to undefined",
      body: "",
      changes: code,
    });
    expect(breaking.decision?.confidence).toBeGreaterThanOrEqual(DECISION_LINE);
  });

  it("proposes an implied choice that names no alternative where only code and tests changed", () => {
    const weigh = (subject: string, ...files: string[]) =>
      classifyCommit({ subject, body: "", changes: changes(...files) }).decision?.confidence;
    const code = ["M lib/assert.js", "M test/assert.js"];
    expect(weigh("Do not suppress errors thrown on integrity checks", ...code)).toBe(0.55);
    expect(weigh("Convert keys to strings", ...code)).toBe(0.55);
    // Where the choice carries (release notes, docs, configuration), it is remembered.
    expect(
      weigh("Do not suppress errors thrown on integrity checks", ...code, "M CHANGELOG.md"),
    ).toBe(0.7);
    expect(
      weigh("Do not suppress errors thrown on integrity checks", "M lib/a.js", "M docs/api.md"),
    ).toBe(0.7);
    // An alternative named is a choice between two: kept over code alone.
    expect(weigh("Return a new assertion instead of this", ...code)).toBe(0.7);
    expect(weigh("No longer allow undefined method calls", ...code)).toBe(0.7);
    // Nothing known of the changes: the wording alone, as before.
    expect(
      classifyCommit({ subject: "Convert keys to strings", body: "" }).decision?.confidence,
    ).toBe(0.7);
  });

  it("proposes a choice a `docs:` or `test:` commit writes down, unless it also changed the set-up", () => {
    const weigh = (subject: string, ...files: string[]) =>
      classifyCommit({ subject, body: "", changes: changes(...files) }).decision?.confidence ?? 0;
    expect(weigh("docs: use pnpm by default", "M README.md")).toBeLessThan(DECISION_LINE);
    expect(weigh("test: switch to vitest", "M test/a.test.ts")).toBeLessThan(DECISION_LINE);
    expect(weigh("Document the parser's default to strict mode", "M docs/parser.md")).toBeLessThan(
      DECISION_LINE,
    );
    // The same words over the manifest or CI: the choice was made in this commit.
    expect(
      weigh("test: switch to vitest", "M package.json", "M test/a.test.ts"),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    // A choice stated in a README by a commit that does not call itself docs: as before.
    expect(weigh("Switch to c8 for code coverage", "M README.md")).toBe(0.6);
  });

  it("makes weak wording a decision where the changes show one", () => {
    const remove = (files: CommitChanges) =>
      classifyCommit({ subject: "Remove code coverage upload", body: "", changes: files }).decision;
    expect(remove(changes("M .github/workflows/main.yml"))?.confidence).toBe(0.7);
    // The same words over source alone, or over docs, are no decision.
    expect(remove(changes("M source/index.ts"))).toBeUndefined();
    expect(remove(changes("M readme.md"))).toBeUndefined();
    // Nor without any paths: words alone are weak evidence.
    expect(
      classifyCommit({ subject: "Remove code coverage upload", body: "" }).decision,
    ).toBeUndefined();
  });

  it("reads a dependency installed, a policy set in configuration, a named interface renamed", () => {
    const by = (description: string, ...files: string[]) =>
      decisionByEvidence(
        { description, type: "other", conventional: false },
        readEvidence(changes(...files)),
      );
    expect(
      by("add lint-staged and scripts to set it up", "M package.json", "M pnpm-lock.yaml"),
    ).toBe(0.65);
    expect(by("Set `baseBranch` to `main`", "M .changeset/config.json")).toBe(0.7);
    expect(
      by("Rename `changeset tag` to `changeset git-tag`", "M src/cli.ts", "A .changeset/x.md"),
    ).toBe(0.7);
    // Tidying up is no choice; a declared feature is not made one by its paths.
    expect(by("Remove unnecessary ignores config", "M .changeset/config.json")).toBeUndefined();
    expect(
      decisionByEvidence(
        { description: "add support for ocaml", type: "feat", conventional: true },
        readEvidence(changes("M action.yml", "M package.json", "M package-lock.json")),
      ),
    ).toBeUndefined();
  });
});
