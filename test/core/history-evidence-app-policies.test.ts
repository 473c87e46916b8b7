/**
 * Decisions as a self-hosted application's history records them (issue 41, fifth round, drawn
 * from the labelled miniflux history): access policies set in a fix over code alone, limits
 * moved, platforms built for, the runtime version required, a dependency bot's schedule; and a
 * refactor's "use X instead of Y" over code alone, which is how code is written. Every message
 * and path here is invented.
 */
import { describe, expect, it } from "vitest";
import { classifyCommit } from "../../src/core/history/classify.js";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import { type CommitChanges, pathKind } from "../../src/core/history/evidence.js";

const changes = (...files: string[]): CommitChanges => ({
  paths: files.map((f) => ({ status: f.slice(0, 1), path: f.slice(2) })),
});

/** The confidence of the decision read from a commit, 0 when none is read. */
const weigh = (subject: string, files: string[], body = "") =>
  classifyCommit({ subject, body, changes: changes(...files) }).decision?.confidence ?? 0;

const CODE = ["M server/listen.go", "M server/listen_test.go"];

describe("an application's policies, set where its code is", () => {
  it("reads an access policy as a choice even in a fix over code alone", () => {
    expect(weigh("fix(server): restrict socket permissions to 0660", CODE)).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(
      weigh("fix(api): forbid setting OAuth identities through a profile update", CODE),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(
      weigh("fix(csrf): apply CSRF checks to all unsafe methods", CODE),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    // Input checked more strictly is a repair: proposed at most.
    const strict = weigh("fix(validator): restrict the sort order to known columns", CODE);
    expect(strict).toBeGreaterThan(0);
    expect(strict).toBeLessThan(DECISION_LINE);
  });

  it("reads a limit users meet, moved, where users are told of it", () => {
    const subject = "fix(api): raise the page size limit to 5000";
    expect(weigh(subject, ["M server/api.go", "M docs/api.md"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh(subject, CODE)).toBeLessThan(DECISION_LINE);
  });
});

describe("what an application is built, run and kept up to date with", () => {
  it("reads a platform built for in CI as a decision, even in a feature", () => {
    const subject = "feat: add linux/ppc64le images";
    expect(weigh(subject, ["M .github/workflows/docker.yml", "M Makefile"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh(subject, CODE)).toBeLessThan(DECISION_LINE);
  });

  it("reads the runtime version required, and a manual page as prose", () => {
    expect(
      weigh("docs: update the required version of Go", ["M go.mod", "M CONTRIBUTING.md"]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(pathKind("myapp.1")).toBe("docs");
  });

  it("reads a person's change to the dependency bot's schedule as a policy, not an update", () => {
    const commit = {
      subject: "chore(dependabot): fewer pull requests with grouping and a monthly cadence",
      body: "",
      changes: changes("M .github/dependabot.yml"),
    };
    expect(classifyCommit(commit).noise).toBeUndefined();
    expect(classifyCommit(commit).decision?.confidence ?? 0).toBeGreaterThanOrEqual(DECISION_LINE);
    // An update itself stays upkeep.
    expect(
      classifyCommit({
        subject: "chore(dependabot): bump left-pad from 1.0.0 to 1.0.1",
        body: "",
        changes: changes("M package.json", "M package-lock.json"),
      }).noise,
    ).toBe("dependency");
  });
});

describe("a refactor's construct for another", () => {
  it("proposes 'use X instead of Y' over code alone, and keeps a policy a refactor sets", () => {
    const swap = weigh("refactor(db): use INNER JOIN instead of LEFT JOIN in the icon query", CODE);
    expect(swap).toBeGreaterThan(0);
    expect(swap).toBeLessThan(DECISION_LINE);
    expect(
      weigh("refactor(db): replace LEFT JOIN with INNER JOIN", ["M server/db.go"]),
    ).toBeLessThan(DECISION_LINE);
    expect(weigh("refactor(ui): require POST for /logout", CODE)).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
  });
});
