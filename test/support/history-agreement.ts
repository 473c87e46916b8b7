/**
 * A second, independent labelling of the held-out histories (test/fixtures/history-corpus/
 * second-labels), how it agrees with the first, and the classifier's figures against each.
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
export const SECOND_LABELLED = ["commander", "yargs", "uptime-kuma"] as const;

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
  /** At the confidence line: against the first labels, the second, and where they agree. */
  classifier: { first: Figures; second: Figures; agreed: Figures };
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
  let both = 0;
  for (const [sha, d] of first) if (d && second.get(sha) === true) both++;
  const count = (labels: Map<string, boolean>) => [...labels.values()].filter(Boolean).length;
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
    agreement: labellerAgreement({
      commits: first.size,
      first: count(first),
      second: count(second),
      both,
    }),
    classifier: { first: figures(first), second: figures(second), agreed: figures(agreed) },
  };
}

/** The histories pooled: every commit of each counted once. */
export function pooledAgreement(rows: readonly HistoryAgreement[]): {
  agreement: LabellerAgreement;
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
  return {
    agreement: labellerAgreement(sum((r) => r.agreement, ["commits", "first", "second", "both"])),
    classifier: { first: pool("first"), second: pool("second"), agreed: pool("agreed") },
  };
}
