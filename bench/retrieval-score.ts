/**
 * Scoring of the retrieval benchmark, pure: what a recall's output says (the current and the
 * coming hit shapes), whether a hit is a piece of evidence, and R@1, R@5, MRR and tokens.
 */
import { countTokens } from "../src/graph/tokens.js";
import { mean, percentile, round } from "./util.js";

/** The most hits a question is judged on. */
export const TOP_K = 5;

/** One hit as the benchmark reads it, whatever shape the recall printed. */
export interface ReadHit {
  /** What the reader is shown: `text` (new shape) or `snippet` (old), plus any rationale. */
  text: string;
  /** The full commit sha, for a hit that is one commit of history. */
  commit?: string;
  tokens?: number;
}

export interface ReadRecall {
  hits: ReadHit[];
  /** The output's own count of the tokens it returned, when it gives one. */
  tokens?: number;
}

/** Lower case, every run of characters that is not a letter or digit as one space. */
export function normalize(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/**
 * The hits of `worker recall --json`: the coming `{hits: [...], tokens}` with `text`, or the
 * current bare array of engram hits with `snippet`.
 */
export function readRecall(json: unknown): ReadRecall {
  const record = (v: unknown) =>
    (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  const top = record(json);
  const list = Array.isArray(json) ? json : Array.isArray(top.hits) ? top.hits : [];
  const hits = list.map((raw): ReadHit => {
    const h = record(raw);
    const body =
      typeof h.text === "string" ? h.text : typeof h.snippet === "string" ? h.snippet : "";
    const rationale = typeof h.rationale === "string" ? ` ${h.rationale}` : "";
    return {
      text: body + rationale,
      ...(typeof h.commit === "string" ? { commit: h.commit } : {}),
      ...(typeof h.tokens === "number" ? { tokens: h.tokens } : {}),
    };
  });
  return { hits, ...(typeof top.tokens === "number" ? { tokens: top.tokens } : {}) };
}

/** What must appear in a hit's normalized text for it to hold a note: its first 60 chars. */
export function noteNeedle(text: string): string {
  return normalize(text).slice(0, 60).trim();
}

/**
 * A commit's subject as a decision or lesson would carry it: a merge's pull request title
 * (its body's first line) for `Merge pull request`, without a conventional-commit type or a
 * trailing `(#123)`, normalized, its first 48 characters.
 */
export function commitNeedle(message: string): string {
  const lines = message.split("\n");
  let subject = lines[0] ?? "";
  if (/^Merge pull request /.test(subject)) {
    subject = lines.slice(1).find((l) => l.trim() !== "") ?? subject;
  }
  subject = subject.replace(/^\s*[a-z]+(\([^)]*\))?!?:\s*/i, "").replace(/\s*\(#\d+\)\s*$/, "");
  return normalize(subject).slice(0, 48).trim();
}

/** How to tell whether a hit is one of a question's pieces of evidence. */
export interface EvidenceMatcher {
  /** Normalized text any of which, found in a hit's normalized text, makes it evidence. */
  needles: string[];
  /** Full commit shas that make a hit evidence by its `commit`. */
  commits?: ReadonlySet<string>;
}

export function isEvidence(hit: ReadHit, matcher: EvidenceMatcher): boolean {
  if (hit.commit !== undefined && matcher.commits !== undefined) {
    // A full sha, or an abbreviation of one (7 hex digits at least).
    const sha = hit.commit.toLowerCase();
    for (const full of matcher.commits) {
      if (sha.length >= 7 && full.startsWith(sha)) return true;
    }
  }
  const text = normalize(hit.text);
  return matcher.needles.some((n) => n !== "" && text.includes(n));
}

/** The 1-based rank of the first evidence among the top 5 hits, 0 when none is evidence. */
export function firstEvidenceRank(hits: readonly ReadHit[], matcher: EvidenceMatcher): number {
  const at = hits.slice(0, TOP_K).findIndex((h) => isEvidence(h, matcher));
  return at + 1;
}

/** Tokens of the top 5: the output's own count when it gives one, else counted here. */
export function tokensReturned(read: ReadRecall): number {
  if (read.tokens !== undefined) return read.tokens;
  return read.hits
    .slice(0, TOP_K)
    .reduce((n, h) => n + (h.tokens ?? (h.text === "" ? 0 : countTokens(h.text))), 0);
}

/** One question's outcome for one system. */
export interface Outcome {
  rank: number;
  tokens: number;
}

export interface Metrics {
  n: number;
  r_at_1: number;
  r_at_5: number;
  mrr: number;
  tokens_mean: number;
  tokens_p95: number;
  tokens_max: number;
}

export function metricsOf(outcomes: readonly Outcome[]): Metrics {
  const n = outcomes.length;
  const share = (f: (o: Outcome) => boolean) => (n === 0 ? 0 : outcomes.filter(f).length / n);
  const tokens = outcomes.map((o) => o.tokens);
  return {
    n,
    r_at_1: round(share((o) => o.rank === 1)),
    r_at_5: round(share((o) => o.rank >= 1 && o.rank <= TOP_K)),
    mrr: round(n === 0 ? 0 : mean(outcomes.map((o) => (o.rank > 0 ? 1 / o.rank : 0)))),
    tokens_mean: n === 0 ? 0 : round(mean(tokens), 1),
    tokens_p95: n === 0 ? 0 : percentile(tokens, 95),
    tokens_max: n === 0 ? 0 : Math.max(...tokens),
  };
}

/** The targets of issue 35 for engram's recall. */
export const TARGETS = { r_at_5: 0.6, over_best_baseline: 1.15, max_tokens: 512 } as const;

export interface Judged {
  /** engram's R@5 over the best baseline's (null when the baseline found nothing). */
  ratio_to_best_baseline: number | null;
  r_at_5_pass: boolean;
  ratio_pass: boolean;
  tokens_pass: boolean;
  pass: boolean;
}

export function judge(engram: Metrics, baselines: readonly Metrics[]): Judged {
  const best = Math.max(0, ...baselines.map((b) => b.r_at_5));
  const ratio = best === 0 ? null : round(engram.r_at_5 / best);
  const r5 = engram.r_at_5 >= TARGETS.r_at_5;
  const over = ratio === null ? engram.r_at_5 > 0 : ratio >= TARGETS.over_best_baseline;
  const tokens = engram.tokens_max <= TARGETS.max_tokens;
  return {
    ratio_to_best_baseline: ratio,
    r_at_5_pass: r5,
    ratio_pass: over,
    tokens_pass: tokens,
    pass: r5 && over && tokens,
  };
}
