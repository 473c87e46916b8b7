/**
 * The held-out histories labelled a second time, blind to the first labels and to the
 * classifier (test/fixtures/history-corpus/README.md): how the two labellers agree, and the
 * classifier's figures against each labelling, on the commits both agree on, and against the
 * labels a third labeller settled where the two disagree, each held to what was measured on
 * 2026-11-29 (gotify and excalidraw: 2026-11-30), rounded down. Figures only, never which commits the
 * classifier missed or called wrongly: these histories stay held out.
 */
import { describe, expect, it } from "vitest";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import {
  type Figures,
  type HistoryAgreement,
  historyAgreement,
  labellerAgreement,
  loadAdjudication,
  loadSecondLabels,
  pooledAgreement,
  SECOND_LABELLED,
  secondLabelsOf,
  settledLabelsOf,
} from "../support/history-agreement.js";
import { isHeldOut, loadCorpus, scoreCorpus } from "../support/history-corpus.js";

interface Floor {
  recall: number;
  precision: number;
}

/**
 * Measured on 2026-11-29 (gotify and excalidraw: 2026-11-30). `labellers`: the second labeller against the first (the first taken
 * as truth), with the decisions each called and both; the classifier at the line against the
 * first labels, the second, and the commits both labellers agree on (the others left out).
 */
const MEASURED: Record<
  (typeof SECOND_LABELLED)[number] | "pooled" | "pooled over five",
  {
    labellers: Floor & { kappa: number; first: number; second: number; both: number };
    /** Pooled only: each history against the first labels is held by history-corpus.test.ts. */
    first?: Floor;
    second: Floor;
    agreed: Floor;
    /** The settled labels: the labellers' where they agree, the adjudicator's elsewhere. */
    settled: Floor & { decisions: number; firstLabeller: Floor; secondLabeller: Floor };
  }
> = {
  commander: {
    labellers: { first: 13, second: 24, both: 9, recall: 0.69, precision: 0.37, kappa: 0.44 },
    second: { recall: 0.37, precision: 0.69 },
    agreed: { recall: 0.77, precision: 0.77 },
    settled: {
      decisions: 23,
      recall: 0.39,
      precision: 0.69,
      firstLabeller: { recall: 0.39, precision: 0.69 },
      secondLabeller: { recall: 1, precision: 0.95 },
    },
  },
  yargs: {
    labellers: { first: 17, second: 21, both: 15, recall: 0.88, precision: 0.71, kappa: 0.77 },
    second: { recall: 0.71, precision: 0.88 },
    agreed: { recall: 0.8, precision: 0.92 },
    settled: {
      decisions: 21,
      recall: 0.71,
      precision: 0.88,
      firstLabeller: { recall: 0.71, precision: 0.88 },
      secondLabeller: { recall: 1, precision: 1 },
    },
  },
  "uptime-kuma": {
    labellers: { first: 18, second: 21, both: 15, recall: 0.83, precision: 0.71, kappa: 0.74 },
    second: { recall: 0.14, precision: 0.75 },
    agreed: { recall: 0.2, precision: 1 },
    settled: {
      decisions: 22,
      recall: 0.13,
      precision: 0.75,
      firstLabeller: { recall: 0.77, precision: 0.94 },
      secondLabeller: { recall: 0.9, precision: 0.95 },
    },
  },
  // Labelled on 2026-11-30, held out from the start of the tenth round (README.md).
  gotify: {
    labellers: { first: 37, second: 39, both: 37, recall: 1, precision: 0.94, kappa: 0.96 },
    second: { recall: 0.23, precision: 0.75 },
    agreed: { recall: 0.24, precision: 0.75 },
    settled: {
      decisions: 38,
      recall: 0.23,
      precision: 0.75,
      firstLabeller: { recall: 0.97, precision: 1 },
      secondLabeller: { recall: 1, precision: 0.97 },
    },
  },
  excalidraw: {
    labellers: { first: 25, second: 24, both: 23, recall: 0.92, precision: 0.95, kappa: 0.93 },
    second: { recall: 0.12, precision: 1 },
    agreed: { recall: 0.13, precision: 1 },
    settled: {
      decisions: 26,
      recall: 0.11,
      precision: 1,
      firstLabeller: { recall: 0.96, precision: 1 },
      secondLabeller: { recall: 0.92, precision: 1 },
    },
  },
  /** The three labelled a second time on 2026-11-29. */
  pooled: {
    labellers: { first: 48, second: 66, both: 39, recall: 0.81, precision: 0.59, kappa: 0.65 },
    first: { recall: 0.54, precision: 0.76 },
    second: { recall: 0.4, precision: 0.79 },
    agreed: { recall: 0.56, precision: 0.88 },
    settled: {
      decisions: 66,
      recall: 0.4,
      precision: 0.79,
      firstLabeller: { recall: 0.62, precision: 0.85 },
      secondLabeller: { recall: 0.96, precision: 0.96 },
    },
  },
  "pooled over five": {
    labellers: { first: 110, second: 129, both: 99, recall: 0.9, precision: 0.76, kappa: 0.8 },
    first: { recall: 0.34, precision: 0.77 },
    second: { recall: 0.3, precision: 0.79 },
    agreed: { recall: 0.34, precision: 0.85 },
    settled: {
      decisions: 130,
      recall: 0.3,
      precision: 0.79,
      firstLabeller: { recall: 0.79, precision: 0.93 },
      secondLabeller: { recall: 0.96, precision: 0.97 },
    },
  },
};

/** When each history was labelled the second time. */
const LABELLED_ON: Record<(typeof SECOND_LABELLED)[number], string> = {
  commander: "2026-11-29",
  yargs: "2026-11-29",
  "uptime-kuma": "2026-11-29",
  gotify: "2026-11-30",
  excalidraw: "2026-11-30",
};

const figures = (f: Figures) =>
  `${f.recall.toFixed(3)} / ${f.precision.toFixed(3)} (${f.found} of ${f.labelled} found, ${f.called} called)`;

function holdsToMeasured(name: keyof typeof MEASURED, row: Omit<HistoryAgreement, "history">) {
  const m = MEASURED[name];
  const a = row.agreement;
  const said = `${name}, second labeller against the first: ${a.recall.toFixed(3)} / ${a.precision.toFixed(3)}, kappa ${a.kappa.toFixed(3)}`;
  expect({ first: a.first, second: a.second, both: a.both }, said).toEqual({
    first: m.labellers.first,
    second: m.labellers.second,
    both: m.labellers.both,
  });
  expect(a.recall, said).toBeGreaterThanOrEqual(m.labellers.recall);
  expect(a.precision, said).toBeGreaterThanOrEqual(m.labellers.precision);
  expect(a.kappa, said).toBeGreaterThanOrEqual(m.labellers.kappa);
  for (const against of ["first", "second", "agreed"] as const) {
    const floor = m[against];
    if (floor === undefined) continue;
    const f = row.classifier[against];
    const which = against === "agreed" ? "on the agreed commits" : `against the ${against} labels`;
    const line = `${name}, the classifier ${which}: ${figures(f)}`;
    expect(f.recall, line).toBeGreaterThanOrEqual(floor.recall);
    expect(f.precision, line).toBeGreaterThanOrEqual(floor.precision);
  }
  const settled = row.classifier.settled;
  const line = `${name}, the classifier against the settled labels: ${figures(settled)}`;
  expect(settled.labelled, line).toBe(m.settled.decisions);
  expect(settled.recall, line).toBeGreaterThanOrEqual(m.settled.recall);
  expect(settled.precision, line).toBeGreaterThanOrEqual(m.settled.precision);
  for (const [which, floor] of [
    ["first", m.settled.firstLabeller],
    ["second", m.settled.secondLabeller],
  ] as const) {
    const l = row.settling[which];
    const said2 = `${name}, the ${which} labeller against the settled labels: ${l.recall.toFixed(3)} / ${l.precision.toFixed(3)}`;
    expect(l.recall, said2).toBeGreaterThanOrEqual(floor.recall);
    expect(l.precision, said2).toBeGreaterThanOrEqual(floor.precision);
  }
}

describe("a second labelling of the held-out histories", () => {
  for (const name of SECOND_LABELLED) {
    it(`${name}: labels every held-out commit, sha for sha in the corpus's order`, () => {
      const corpus = loadCorpus(name);
      const labelling = loadSecondLabels(name);
      expect(labelling.history).toBe(name);
      expect(labelling.repository).toBe(corpus.repository);
      expect(labelling.labelled).toBe(LABELLED_ON[name]);
      const held = corpus.commits.filter((c) => isHeldOut(corpus, c));
      expect(held.length).toBeGreaterThan(100);
      expect(labelling.commits.map((c) => c.sha)).toEqual(held.map((c) => c.sha));
      for (const c of labelling.commits) {
        expect(typeof c.decision).toBe("boolean");
        expect(typeof c.sure).toBe("boolean");
        // A decision, or a call it was unsure of, carries its reason.
        if (c.decision || !c.sure) expect(c.why, c.sha).toMatch(/\S/);
      }
    });

    it(`${name}: the labellers and the classifier no lower than measured`, () => {
      const row = historyAgreement(name, DECISION_LINE);
      // Figures only: no list of commits leaves the scoring.
      expect(Object.keys(row.classifier.agreed).sort()).toEqual(
        ["called", "commits", "found", "labelled", "precision", "recall"].sort(),
      );
      holdsToMeasured(name, row);
    });
  }

  for (const name of SECOND_LABELLED) {
    it(`${name}: the adjudicator settled exactly the labellers' disagreements`, () => {
      const corpus = loadCorpus(name);
      const adjudication = loadAdjudication(name);
      expect(adjudication.history).toBe(name);
      expect(adjudication.repository).toBe(corpus.repository);
      for (const c of adjudication.commits) expect(c.why, c.sha).toMatch(/\S/);
      const first = new Map(
        corpus.commits.filter((c) => isHeldOut(corpus, c)).map((c) => [c.sha, c.decision]),
      );
      const second = secondLabelsOf(corpus, loadSecondLabels(name));
      expect(settledLabelsOf(first, second, adjudication).size).toBe(first.size);
      const [, ...rest] = adjudication.commits;
      expect(() => settledLabelsOf(first, second, { ...adjudication, commits: rest })).toThrow(
        /disagreements/,
      );
    });
  }

  it("pooled over the three of 2026-11-29, and over all five: no lower than measured", () => {
    const rows = SECOND_LABELLED.map((name) => historyAgreement(name, DECISION_LINE));
    holdsToMeasured("pooled", pooledAgreement(rows.slice(0, 3)));
    holdsToMeasured("pooled over five", pooledAgreement(rows));
  });

  it("refuses second labels that do not match the corpus's held-out commits", () => {
    const corpus = loadCorpus("yargs");
    const labelling = loadSecondLabels("yargs");
    const [a, b, ...rest] = labelling.commits;
    if (a === undefined || b === undefined) throw new Error("yargs has no second labels");
    expect(() => secondLabelsOf(corpus, { ...labelling, commits: [b, a, ...rest] })).toThrow(
      /commit 0 is/,
    );
    expect(() => secondLabelsOf(corpus, { ...labelling, commits: rest })).toThrow(/240 commits/);
  });

  it("computes Cohen's kappa from the two-by-two table", () => {
    // 50 commits: 20 both call decisions, 5 the first alone, 10 the second alone, 15 neither:
    // observed agreement 0.7, by chance 0.5, kappa 0.4.
    const k = labellerAgreement({ commits: 50, first: 25, second: 30, both: 20 });
    expect(k.kappa).toBeCloseTo(0.4, 10);
    expect(k.recall).toBeCloseTo(0.8, 10);
    expect(k.precision).toBeCloseTo(20 / 30, 10);
    expect(labellerAgreement({ commits: 10, first: 3, second: 3, both: 3 }).kappa).toBe(1);
  });

  it("scores against another labelling, leaving out the commits it does not hold", () => {
    const corpus = loadCorpus("checkout");
    const own = scoreCorpus(corpus, { heldOut: false, line: DECISION_LINE });
    const same = new Map(corpus.commits.map((c) => [c.sha, c.decision]));
    const again = scoreCorpus(corpus, { heldOut: false, line: DECISION_LINE, labels: same });
    expect(again).toEqual(own);
    const decisionsOnly = new Map(
      corpus.commits.filter((c) => c.decision).map((c) => [c.sha, true]),
    );
    const part = scoreCorpus(corpus, {
      heldOut: false,
      line: DECISION_LINE,
      labels: decisionsOnly,
    });
    expect(part.commits).toBe(own.labelled);
    expect(part.precision).toBe(1);
    expect(part.found).toBe(own.found);
  });
});
