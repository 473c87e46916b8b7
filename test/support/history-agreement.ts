/**
 * A second, independent labelling of the held-out histories (test/fixtures/history-corpus/
 * second-labels), how it agrees with the first, a third labeller's settling of their
 * disagreements (adjudicated/), and the classifier's figures against each.
 * Figures only: which commits the classifier missed or called wrongly is never returned here,
 * lest a held-out history be tuned on.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./bins.js";
import {
  type Corpus,
  type CorpusScore,
  callsAtLine,
  isHeldOut,
  loadCorpus,
  scoreCorpus,
} from "./history-corpus.js";

/** The held-out histories a second labeller labelled, in the corpus's order. */
export const SECOND_LABELLED = [
  "commander",
  "yargs",
  "uptime-kuma",
  "gotify",
  "excalidraw",
] as const;

export interface SecondLabel {
  sha: string;
  decision: boolean;
  /** Whether the second labeller was sure of its call. */
  sure: boolean;
  /** Its reason, given for every decision and every call it was unsure of. */
  why?: string;
}

export interface SecondLabelling {
  history: string;
  repository: string;
  part: string;
  labeller: string;
  labelled: string;
  blind_to: string;
  instructions: string;
  fields: string;
  /** The held-out commits of the history, in the corpus file's order (newest first). */
  commits: SecondLabel[];
}

const DIR = join(ROOT, "test", "fixtures", "history-corpus", "second-labels");
const ADJUDICATED = join(ROOT, "test", "fixtures", "history-corpus", "adjudicated");

/** A disagreement of the two labellers, settled by a third. */
export interface Adjudication {
  sha: string;
  decision: boolean;
  why: string;
}

export interface AdjudicatedLabelling {
  history: string;
  repository: string;
  part: string;
  adjudicator: string;
  adjudicated: string;
  blind_to: string;
  fields: string;
  /** The commits the two labellers labelled differently, in the corpus file's order. */
  commits: Adjudication[];
}

export function loadAdjudication(name: string): AdjudicatedLabelling {
  return JSON.parse(
    readFileSync(join(ADJUDICATED, `${name}.json`), "utf8"),
  ) as AdjudicatedLabelling;
}

/**
 * The settled labels: the two labellers' where they agree, the adjudicator's where they do
 * not, after checking that it settled exactly their disagreements, in order.
 */
export function settledLabelsOf(
  first: ReadonlyMap<string, boolean>,
  second: ReadonlyMap<string, boolean>,
  adjudication: AdjudicatedLabelling,
): Map<string, boolean> {
  const disagreed = [...first].filter(([sha, d]) => second.get(sha) !== d).map(([sha]) => sha);
  const shas = adjudication.commits.map((c) => c.sha);
  if (shas.length !== disagreed.length || shas.some((sha, i) => sha !== disagreed[i])) {
    throw new Error(
      `adjudication of ${adjudication.history}: ${shas.length} commits settled for ${disagreed.length} disagreements, or not the same ones`,
    );
  }
  const settled = new Map(first);
  for (const c of adjudication.commits) settled.set(c.sha, c.decision);
  return settled;
}

export function loadSecondLabels(name: string): SecondLabelling {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as SecondLabelling;
}

/** The cells of a two-by-two table: how two labellings of the same commits split. */
export interface AgreementCounts {
  commits: number;
  /** Decisions by the first labelling, by the second, and by both. */
  first: number;
  second: number;
  both: number;
}

/** Two labellings compared, the first taken as truth: the second's recall and precision. */
export interface LabellerAgreement extends AgreementCounts {
  recall: number;
  precision: number;
  /** Cohen's kappa: agreement beyond what the two labellers' rates give by chance. */
  kappa: number;
}

export function labellerAgreement(counts: AgreementCounts): LabellerAgreement {
  const { commits: n, first, second, both } = counts;
  const observed = (n - first - second + 2 * both) / n;
  const chance = (first / n) * (second / n) + (1 - first / n) * (1 - second / n);
  return {
    ...counts,
    recall: first === 0 ? 1 : both / first,
    precision: second === 0 ? 1 : both / second,
    kappa: chance === 1 ? 1 : (observed - chance) / (1 - chance),
  };
}

/** The classifier's calls against one labelling: counts and figures, no commit named. */
export type Figures = Omit<CorpusScore, "missed" | "wrong" | "with_rationale">;

export interface HistoryAgreement {
  history: string;
  agreement: LabellerAgreement;
  /** Each labeller against the settled labels (those taken as truth). */
  settling: { first: LabellerAgreement; second: LabellerAgreement };
  /**
   * At the confidence line: against the first labels, the second, where they agree, and the
   * settled labels.
   */
  classifier: { first: Figures; second: Figures; agreed: Figures; settled: Figures };
}

/**
 * The second labels of a history by sha, after checking that they cover its held-out commits
 * exactly, in the corpus file's order.
 */
export function secondLabelsOf(corpus: Corpus, labelling: SecondLabelling): Map<string, boolean> {
  const held = corpus.commits.filter((c) => isHeldOut(corpus, c)).map((c) => c.sha);
  const shas = labelling.commits.map((c) => c.sha);
  const at = shas.findIndex((sha, i) => sha !== held[i]);
  if (at >= 0 || shas.length !== held.length) {
    throw new Error(
      `second labels of ${labelling.history}: ${shas.length} commits for ${held.length} held out` +
        (at >= 0 ? `; commit ${at} is ${shas[at]}, the corpus has ${held[at]}` : ""),
    );
  }
  return new Map(labelling.commits.map((c) => [c.sha, c.decision]));
}

/**
 * A held-out history scored both ways: the labellers against each other, and the classifier
 * (at `line`) against the first labels, the second, and the commits both agree on. The
 * classifier reads the whole history as the import does, whatever commits are scored.
 */
export function historyAgreement(name: string, line: number): HistoryAgreement {
  const corpus = loadCorpus(name);
  const second = secondLabelsOf(corpus, loadSecondLabels(name));
  const first = new Map(
    corpus.commits.filter((c) => isHeldOut(corpus, c)).map((c) => [c.sha, c.decision === true]),
  );
  const agreed = new Map([...first].filter(([sha, d]) => second.get(sha) === d));
  const settled = settledLabelsOf(first, second, loadAdjudication(name));
  const count = (labels: ReadonlyMap<string, boolean>) =>
    [...labels.values()].filter(Boolean).length;
  /** `labels` against `truth`, both over the same commits. */
  const against = (truth: ReadonlyMap<string, boolean>, labels: ReadonlyMap<string, boolean>) => {
    let both = 0;
    for (const [sha, d] of truth) if (d && labels.get(sha) === true) both++;
    return labellerAgreement({
      commits: truth.size,
      first: count(truth),
      second: count(labels),
      both,
    });
  };
  const decide = callsAtLine(corpus, line);
  const figures = (labels: Map<string, boolean>): Figures => {
    const { commits, labelled, found, called, recall, precision } = scoreCorpus(
      corpus,
      { heldOut: true, labels },
      decide,
    );
    return { commits, labelled, found, called, recall, precision };
  };
  return {
    history: name,
    agreement: against(first, second),
    settling: { first: against(settled, first), second: against(settled, second) },
    classifier: {
      first: figures(first),
      second: figures(second),
      agreed: figures(agreed),
      settled: figures(settled),
    },
  };
}

/** The histories pooled: every commit of each counted once. */
export function pooledAgreement(rows: readonly HistoryAgreement[]): {
  agreement: LabellerAgreement;
  settling: HistoryAgreement["settling"];
  classifier: HistoryAgreement["classifier"];
} {
  const sum = <K extends string>(pick: (r: HistoryAgreement) => Record<K, number>, keys: K[]) =>
    Object.fromEntries(keys.map((k) => [k, rows.reduce((n, r) => n + pick(r)[k], 0)])) as Record<
      K,
      number
    >;
  const pool = (which: keyof HistoryAgreement["classifier"]): Figures => {
    const s = sum((r) => r.classifier[which], ["commits", "labelled", "found", "called"]);
    return {
      ...s,
      recall: s.labelled === 0 ? 1 : s.found / s.labelled,
      precision: s.called === 0 ? 1 : s.found / s.called,
    };
  };
  const cells = ["commits", "first", "second", "both"] as (
    | "commits"
    | "first"
    | "second"
    | "both"
  )[];
  return {
    agreement: labellerAgreement(sum((r) => r.agreement, cells)),
    settling: {
      first: labellerAgreement(sum((r) => r.settling.first, cells)),
      second: labellerAgreement(sum((r) => r.settling.second, cells)),
    },
    classifier: {
      first: pool("first"),
      second: pool("second"),
      agreed: pool("agreed"),
      settled: pool("settled"),
    },
  };
}
