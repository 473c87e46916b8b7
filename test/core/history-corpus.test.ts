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

/**
 * Per history, the floors asserted: the targets, except where a history is below them today
 * (issue 28 stays open). commander's newest 220 commits hold 9 decisions; the one wrong call,
 * `refactor: use an object spread instead of Object.assign`, is a code idiom stated as a
 * choice, which the rules cannot tell from `refactor: parse with zod instead of ...`.
 */
const FLOORS: Record<string, { recall: number; precision: number }> = {
  "release-please-action": { recall: RECALL, precision: PRECISION },
  checkout: { recall: RECALL, precision: PRECISION },
  commander: { recall: RECALL, precision: 0.85 },
};

describe("decisions of real histories", () => {
  for (const [name, floor] of Object.entries(FLOORS)) {
    it(`${name}: recall at least ${floor.recall}, precision at least ${floor.precision}`, () => {
      const score = scoreCorpus(loadCorpus(name), { heldOut: false });
      expect(score.labelled).toBeGreaterThan(5);
      expect(score.recall, missed(score)).toBeGreaterThanOrEqual(floor.recall);
      expect(score.precision, wrong(score)).toBeGreaterThanOrEqual(floor.precision);
    });
  }

  // The held-out part was labelled after the rules were written and never tuned on: its
  // figures say how the rules carry to commits they were not written from. They are below
  // the targets today (issue 28 stays open); this floor keeps them from sliding further.
  it("commander's held-out commits: recall and precision no lower than measured", () => {
    const score = scoreCorpus(loadCorpus("commander"), { heldOut: true });
    expect(score.labelled).toBeGreaterThan(10);
    expect(score.recall, missed(score)).toBeGreaterThanOrEqual(0.5);
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
