/**
 * Real histories, labelled by hand (test/fixtures/history-corpus/README.md): the commits a
 * maintainer would call decisions must become decisions, and what the import calls a decision
 * must be one. Recall and precision per history, as the bench reports them.
 */
import { describe, expect, it } from "vitest";
import { type CorpusScore, loadCorpus, scoreCorpus } from "../support/history-corpus.js";

/** The targets of the issue: most decisions found, almost nothing else called one. */
const RECALL = 0.75;
const PRECISION = 0.9;

/** Every labelled history (its tuned part) is held to the targets of issue 28. */
// chai's 3.5.0..4.0.0 (merge commits carrying the pull request's title) was labelled before
// any rule was measured on it: recall 0.30, precision 0.58 then; the rules drawn from it since
// (merge titles read as commits, `Breaking:` subjects, runtime support, libraries adopted,
// interfaces removed, prose choices) reach 0.89 and 0.92.
const HISTORIES = ["release-please-action", "checkout", "commander", "chai"];

describe("decisions of real histories", () => {
  for (const name of HISTORIES) {
    it(`${name}: recall at least ${RECALL}, precision at least ${PRECISION}`, () => {
      const score = scoreCorpus(loadCorpus(name), { heldOut: false });
      expect(score.labelled).toBeGreaterThan(5);
      expect(score.recall, missed(score)).toBeGreaterThanOrEqual(RECALL);
      expect(score.precision, wrong(score)).toBeGreaterThanOrEqual(PRECISION);
    });
  }

  // The held-out part was labelled after the rules were written and never tuned on: its
  // figures say how the rules carry to commits they were not written from. They are below
  // the targets today (issue 28 stays open); this floor keeps them from sliding further.
  it("commander's held-out commits: recall and precision no lower than measured", () => {
    const score = scoreCorpus(loadCorpus("commander"), { heldOut: true });
    expect(score.labelled).toBeGreaterThan(10);
    expect(score.recall, missed(score)).toBeGreaterThanOrEqual(0.5);
    // 0.50 before the rules drawn from chai, 0.47 after some, 0.50 again with the prose rule.
    // The held-out figures were watched while rules changed, and one listing of its wrong calls
    // was seen: it is no longer a fully clean check (chai's first figures are the cleaner one).
    expect(score.precision, wrong(score)).toBeGreaterThanOrEqual(0.5);
  });

  it("scores a classifier that calls everything a decision as imprecise", () => {
    const corpus = loadCorpus("checkout");
    const score = scoreCorpus(corpus, { heldOut: false }, () => true);
    expect(score.recall).toBe(1);
    expect(score.precision).toBeLessThan(0.2);
  });
});

function missed(score: CorpusScore): string {
  return `missed decisions:\n${score.missed.join("\n")}`;
}

function wrong(score: CorpusScore): string {
  return `called decisions, labelled otherwise:\n${score.wrong.join("\n")}`;
}
