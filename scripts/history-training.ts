/**
 * The learned decision scorer's training (issue 41, the seventh round of
 * test/fixtures/history-corpus/README.md): the tuned histories' commits as feature rows,
 * deterministic L2-regularised logistic regression (Newton's method, a fixed number of steps),
 * and leave-one-history-out figures. The held-out histories are never read: yargs,
 * uptime-kuma, gotify and excalidraw are not in the list, commander's held-out commits are
 * dropped on load.
 */
import { DECISION_LINE } from "../src/core/history/confidence.js";
import { readMessage } from "../src/core/history/git-events.js";
import { corpusChanges, loadCorpus } from "../test/support/history-corpus.js";
import { commitFeatures, FEATURE_NAMES, scoredCommit } from "./history-features.js";

/** The tuned histories, by name: the only ones training may read. */
export const TUNED_HISTORIES = [
  "release-please-action",
  "checkout",
  "commander",
  "chai",
  "got",
  "changesets",
  "miniflux",
  "express",
  "memos",
  "umami",
  "linkding",
] as const;

/** One tuned commit: its label, the rules' call at the line, and its features (unless noise). */
export interface Row {
  history: string;
  sha: string;
  decision: boolean;
  /** The rules call it a decision at the import's line. */
  rules: boolean;
  /** Undefined for noise the rules count: never a decision. */
  x?: number[];
}

/** Every tuned commit of the tuned histories, in the corpus's order. */
export function tunedRows(): Row[] {
  const rows: Row[] = [];
  for (const history of TUNED_HISTORIES) {
    const corpus = loadCorpus(history);
    if (corpus.held_out === true) throw new Error(`${history} is held out`);
    for (const c of corpus.commits) {
      if (c.held_out === true) continue;
      const read = readMessage({
        message: c.message,
        parents: c.parents,
        author: c.bot ? "bot <bot[bot]@users.noreply.github.com>" : "someone <someone@example.com>",
        ...(c.files ? { changes: corpusChanges(c) } : {}),
      });
      const conf = read.cls.decision ? (read.cls.decision.confidence ?? 1) : -1;
      const scored = scoredCommit(read.text, read.cls);
      rows.push({
        history,
        sha: c.sha,
        decision: c.decision,
        rules: conf >= DECISION_LINE,
        ...(scored ? { x: commitFeatures(scored, DECISION_LINE) } : {}),
      });
    }
  }
  return rows;
}

/** Newton steps: enough for the L2-regularised optimum to settle to every printed digit. */
const STEPS = 30;

/**
 * Weights minimising the mean logistic loss plus `lambda / 2` times the squared weights (the
 * bias, feature 0, not penalised), from zero, by a fixed number of Newton steps. Deterministic.
 */
export function fitLogistic(rows: readonly Row[], lambda: number): number[] {
  const data = rows.filter((r) => r.x !== undefined);
  const d = FEATURE_NAMES.length;
  const n = data.length;
  const w = new Array<number>(d).fill(0);
  for (let step = 0; step < STEPS; step++) {
    const grad = new Array<number>(d).fill(0);
    const hess = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const r of data) {
      const x = r.x as number[];
      let z = 0;
      for (let i = 0; i < d; i++) z += (w[i] as number) * (x[i] as number);
      const p = 1 / (1 + Math.exp(-z));
      const g = p - (r.decision ? 1 : 0);
      const h = p * (1 - p);
      for (let i = 0; i < d; i++) {
        const xi = x[i] as number;
        if (xi === 0) continue;
        grad[i] = (grad[i] as number) + (g * xi) / n;
        const row = hess[i] as number[];
        for (let j = 0; j <= i; j++) row[j] = (row[j] as number) + (h * xi * (x[j] as number)) / n;
      }
    }
    for (let i = 0; i < d; i++) {
      const row = hess[i] as number[];
      for (let j = 0; j < i; j++) (hess[j] as number[])[i] = row[j] as number;
      // A small ridge on the bias too keeps the system solvable; the penalty itself spares it.
      row[i] = (row[i] as number) + (i === 0 ? 1e-9 : lambda);
      if (i > 0) grad[i] = (grad[i] as number) + lambda * (w[i] as number);
    }
    const delta = solve(hess, grad);
    for (let i = 0; i < d; i++) w[i] = (w[i] as number) - (delta[i] as number);
  }
  return w;
}

/** Solves `a x = b` by Gaussian elimination with partial pivoting (a symmetric, positive). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) {
      if (
        Math.abs((m[r] as number[])[col] as number) >
        Math.abs((m[pivot] as number[])[col] as number)
      ) {
        pivot = r;
      }
    }
    [m[col], m[pivot]] = [m[pivot] as number[], m[col] as number[]];
    const top = m[col] as number[];
    const lead = top[col] as number;
    for (let r = col + 1; r < n; r++) {
      const row = m[r] as number[];
      const f = (row[col] as number) / lead;
      if (f === 0) continue;
      for (let c = col; c <= n; c++) row[c] = (row[c] as number) - f * (top[c] as number);
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    const row = m[r] as number[];
    let s = row[n] as number;
    for (let c = r + 1; c < n; c++) s -= (row[c] as number) * (x[c] as number);
    x[r] = s / (row[r] as number);
  }
  return x;
}

/** The probability a row is a decision under `w` (0 for noise). */
export function probability(row: Row, w: readonly number[]): number {
  if (row.x === undefined) return 0;
  let z = 0;
  for (let i = 0; i < row.x.length; i++) z += (w[i] as number) * (row.x[i] as number);
  return 1 / (1 + Math.exp(-z));
}

/** Recall and precision of calls over rows. */
export interface Figures {
  labelled: number;
  found: number;
  called: number;
  recall: number;
  precision: number;
}

export function figures(rows: readonly Row[], called: (r: Row, i: number) => boolean): Figures {
  let labelled = 0;
  let found = 0;
  let calls = 0;
  rows.forEach((r, i) => {
    if (r.decision) labelled++;
    if (called(r, i)) {
      calls++;
      if (r.decision) found++;
    }
  });
  return {
    labelled,
    found,
    called: calls,
    recall: labelled === 0 ? 1 : found / labelled,
    precision: calls === 0 ? 1 : found / calls,
  };
}

/** Each row's probability from the model trained without its own history. */
export function leaveOneHistoryOut(rows: readonly Row[], lambda: number): number[] {
  const out = new Array<number>(rows.length).fill(0);
  for (const history of TUNED_HISTORIES) {
    const w = fitLogistic(
      rows.filter((r) => r.history !== history),
      lambda,
    );
    rows.forEach((r, i) => {
      if (r.history === history) out[i] = probability(r, w);
    });
  }
  return out;
}
