/**
 * Real histories, labelled by hand (test/fixtures/history-corpus/README.md): the commits a
 * maintainer would call decisions must become decisions, and what the import calls a decision
 * must be one. Recall and precision per history at the import's confidence line, as the bench
 * reports them; the held-out histories apart, each held to what was measured on it.
 */
import { describe, expect, it } from "vitest";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import {
  type Corpus,
  type CorpusScore,
  loadCorpus,
  scoreCorpus,
} from "../support/history-corpus.js";

/** The targets of the issue: most decisions found, almost nothing else called one. */
const RECALL = 0.75;
const PRECISION = 0.9;

/** Histories the rules were drawn from: each is held to the targets. */
// chai's 3.5.0..4.0.0 was labelled before any rule was measured on it (recall 0.30, precision
// 0.58 then); got was labelled before any rule ran on it (0.63 and 0.92 then, before the
// evidence of changed paths was read).
const TUNED = ["release-please-action", "checkout", "commander", "chai", "got"];

/**
 * Floors below the targets, measured and rounded down a little: honest figures, not goals.
 * changesets (a monorepo whose decisions are mostly CI, publishing and configuration policy)
 * was at 0.14 and 0.56 before its paths were read; tuned on since, it reaches 0.64 and 0.92,
 * and 0.69 and 0.93 after the fourth round (a platform added to CI, a library announced).
 * miniflux (a self-hosted application, added in the fifth round) was at 0.30 and 0.67 before
 * any rule was drawn from it, and reaches 0.65 and 1.00: most of its other decisions are
 * choices a fix or a feature makes in code alone, worded as repairs. express (a free-form
 * library, added in the sixth round) was at 0.48 and 0.67 before any rule ran on it; the rules
 * drawn from it did not carry to the held-out histories and were not kept (README.md), so it
 * is held to what it was measured at. memos (an application, added after that round's rules
 * were set aside) was at 0.43 and 0.64 before any rule was drawn from it, and reaches 0.62
 * and 0.93 after the eighth round's rules were drawn from it. umami and linkding (applications,
 * added in the eighth round) were at 0.21 / 0.67 and 0.24 / 0.56 before any rule ran on them:
 * most of their decisions show only in a diff (a release workflow reworked, a driver packaged
 * differently), which the import does not read.
 */
const TUNED_BELOW_TARGET: Record<string, { recall: number; precision: number }> = {
  changesets: { recall: 0.65, precision: 0.9 },
  miniflux: { recall: 0.6, precision: 0.9 },
  express: { recall: 0.45, precision: 0.65 },
  memos: { recall: 0.6, precision: 0.9 },
  umami: { recall: 0.25, precision: 0.7 },
  linkding: { recall: 0.45, precision: 0.7 },
};

/**
 * The held-out histories: labelled before any rule ran on them, never looked at while rules
 * changed (README.md), measured once after each round of rules. Their floors are the last
 * figures rounded down; they are below the targets, and say how far the rules carry to
 * histories they were not drawn from. Before issue 41: commander's older part 0.54 / 0.50,
 * yargs 0.59 / 0.50, uptime-kuma 0.06 / 1.00; after its first round 0.69 / 0.60, 0.76 / 0.57,
 * 0.17 / 1.00; after the second (a choice that reaches only code and tests is proposed), and
 * the same to the commit after the README's fourth round (an application's images,
 * environment and migrations read), measured once after its last rule; after the fifth
 * (rules drawn from the labelled miniflux application), measured once after its last rule,
 * uptime-kuma 0.17 -> 0.22 and the others unchanged; the sixth's rules (drawn from express)
 * lowered two of them and were not kept (README.md); the seventh's learned scorer made the
 * rules' calls on every held-out history and was not wired in (README.md); the eighth's (drawn
 * from memos, umami and linkding) moved none of them; the ninth's (a library switched, read
 * from the manifests) and the tenth's (CI and deployment settings, read from the diffs) lowered
 * them and were not kept (README.md). The figures stand:
 */
const HELD_OUT: { name: string; recall: number; precision: number; measured: string }[] = [
  { name: "commander", recall: 0.65, precision: 0.65, measured: "0.69 / 0.69" },
  { name: "yargs", recall: 0.7, precision: 0.7, measured: "0.76 / 0.76" },
  { name: "uptime-kuma", recall: 0.2, precision: 0.9, measured: "0.22 / 1.00" },
  // Held out from the start of the tenth round, first measured after it: a classifier's first
  // sight of two applications.
  { name: "gotify", recall: 0.2, precision: 0.7, measured: "0.24 / 0.75" },
  { name: "excalidraw", recall: 0.1, precision: 0.9, measured: "0.12 / 1.00" },
];

describe("decisions of real histories", () => {
  for (const name of TUNED) {
    it(`${name}: recall at least ${RECALL}, precision at least ${PRECISION}`, () => {
      const score = scoreCorpus(loadCorpus(name), { heldOut: false, line: DECISION_LINE });
      expect(score.labelled).toBeGreaterThan(5);
      expect(score.recall, missed(score)).toBeGreaterThanOrEqual(RECALL);
      expect(score.precision, wrong(score)).toBeGreaterThanOrEqual(PRECISION);
    });
  }

  for (const [name, floor] of Object.entries(TUNED_BELOW_TARGET)) {
    it(`${name}: recall and precision no lower than measured`, () => {
      const score = scoreCorpus(loadCorpus(name), { heldOut: false, line: DECISION_LINE });
      expect(score.labelled).toBeGreaterThan(5);
      expect(score.recall, missed(score)).toBeGreaterThanOrEqual(floor.recall);
      expect(score.precision, wrong(score)).toBeGreaterThanOrEqual(floor.precision);
    });
  }

  for (const held of HELD_OUT) {
    // Only the figures: a held-out history's misses are not listed, lest they be tuned on.
    it(`held out, ${held.name}: no lower than measured (${held.measured})`, () => {
      const score = scoreCorpus(loadCorpus(held.name), { heldOut: true, line: DECISION_LINE });
      expect(score.labelled).toBeGreaterThan(10);
      expect(score.recall).toBeGreaterThanOrEqual(held.recall);
      expect(score.precision).toBeGreaterThanOrEqual(held.precision);
    });
  }

  it("holds out yargs, uptime-kuma, gotify and excalidraw whole, and no tuned history", () => {
    for (const name of ["yargs", "uptime-kuma", "gotify", "excalidraw"]) {
      expect(loadCorpus(name).held_out).toBe(true);
    }
    for (const name of [...TUNED, ...Object.keys(TUNED_BELOW_TARGET)]) {
      expect(loadCorpus(name).held_out).toBeUndefined();
    }
  });

  it("reads what each commit changed: without its paths, got and changesets lose decisions", () => {
    for (const name of ["got", "changesets"]) {
      const corpus = loadCorpus(name);
      const withPaths = scoreCorpus(corpus, { heldOut: false, line: DECISION_LINE });
      const blind = scoreCorpus(withoutPaths(corpus), { heldOut: false, line: DECISION_LINE });
      expect(withPaths.found).toBeGreaterThan(blind.found);
    }
  });

  it("scores a classifier that calls everything a decision as imprecise", () => {
    const corpus = loadCorpus("checkout");
    const score = scoreCorpus(corpus, { heldOut: false }, () => true);
    expect(score.recall).toBe(1);
    expect(score.precision).toBeLessThan(0.2);
  });
});

function withoutPaths(corpus: Corpus): Corpus {
  return { ...corpus, commits: corpus.commits.map(({ files: _files, ...c }) => c) };
}

function missed(score: CorpusScore): string {
  return `missed decisions:\n${score.missed.join("\n")}`;
}

function wrong(score: CorpusScore): string {
  return `called decisions, labelled otherwise:\n${score.wrong.join("\n")}`;
}
