import { SPLIT_PATTERN } from "../graph/context-tokens.js";
import type { RecallHit } from "./hit.js";
import type { NoteTokens } from "./notes.js";

/**
 * Recall's token budget. Counting with the real tokenizer means loading a megabyte of tables
 * per process (about 100 ms), more than a whole recall may take; the count here follows the
 * tokenizer's own pre-tokenizer and errs high: over this repository's docs it is at or above
 * cl100k's count for 99 paragraphs in 100, about 12% above at the median.
 */

/**
 * Made at the first count: its Unicode classes cost a command that never counts (`worker
 * emit` loads this module with the recall command's flags).
 */
let split: RegExp | undefined;
const LEADING = /^[^\p{L}\p{N}]/u;
const ASCII_WORD = /^[A-Za-z]+$/;
const DIGITS = /^\p{N}+$/u;
const ASCII = /^[\x20-\x7e\s]+$/;

/** An upper estimate of the cl100k tokens of `text`. */
export function estimateTokens(text: string): number {
  let n = 0;
  split ??= new RegExp(SPLIT_PATTERN, "gu");
  for (const [piece] of text.matchAll(split)) {
    const s = piece.replace(LEADING, "");
    if (s === "") n += 1;
    else if (ASCII_WORD.test(s)) n += s.length <= 6 ? 1 : Math.ceil(s.length / 4);
    else if (DIGITS.test(s)) n += 1;
    else if (ASCII.test(s)) n += Math.ceil(s.length / 1.5);
    else n += Buffer.byteLength(s, "utf8");
  }
  return Math.ceil(n * 1.05);
}

/** The budget of a recall an agent reads (`--json`, MCP): its top hits in few tokens. */
export const DEFAULT_RECALL_TOKENS = 512;

/** Fewest tokens of text a hit keeps when the budget runs short: enough to know it. */
const MIN_HIT_TOKENS = 24;

/**
 * The hits within `maxTokens` of text, filled in rank order: each hit whole while it fits,
 * keeping room for the hits after it to show their start; a hit cut to fit says so
 * (`truncated`); hits past the budget are left out. Each hit's `tokens` is set.
 */
export function fitHits(
  hits: readonly RecallHit[],
  counts: readonly (NoteTokens | undefined)[],
  maxTokens: number,
): RecallHit[] {
  const out: RecallHit[] = [];
  let left = maxTokens;
  hits.forEach((hit, i) => {
    const later = hits.length - i - 1;
    const allowance = Math.max(0, left - later * MIN_HIT_TOKENS);
    const budget = Math.max(allowance, Math.min(left, MIN_HIT_TOKENS));
    const fitted = fitHit(hit, counts[i] ?? estimated(hit), budget);
    if (fitted === undefined || fitted.tokens > left) return;
    out.push(fitted);
    left -= fitted.tokens;
  });
  return out;
}

function estimated(hit: RecallHit): NoteTokens {
  return {
    text: estimateTokens(hit.text),
    rationale: hit.rationale === undefined ? 0 : estimateTokens(hit.rationale),
  };
}

/**
 * The hit within `budget` tokens: whole, or its reason then its text cut at a word. A cut
 * part is counted by the estimate, scaled up to the real count of the whole where that is
 * higher, so a cut never claims fewer tokens than it holds.
 */
function fitHit(hit: RecallHit, counts: NoteTokens, budget: number): RecallHit | undefined {
  if (counts.text + counts.rationale <= budget) {
    return { ...hit, tokens: counts.text + counts.rationale };
  }
  if (budget < 4) return undefined;
  const { rationale: _dropped, ...bare } = hit;
  if (counts.text < budget && hit.rationale !== undefined) {
    const rationale = cutToTokens(hit.rationale, counts.rationale, budget - counts.text);
    if (rationale.text === "") return { ...bare, truncated: true, tokens: counts.text };
    return {
      ...bare,
      rationale: rationale.text,
      truncated: true,
      tokens: counts.text + rationale.tokens,
    };
  }
  const text = cutToTokens(hit.text, counts.text, budget);
  if (text.text === "") return undefined;
  return { ...bare, text: text.text, truncated: true, tokens: text.tokens };
}

/** The longest start of `text` ending at a word and an ellipsis within `budget` tokens. */
function cutToTokens(
  text: string,
  wholeTokens: number,
  budget: number,
): { text: string; tokens: number } {
  const scale = Math.max(1, wholeTokens / Math.max(1, estimateTokens(text)));
  const count = (part: string) => Math.ceil(estimateTokens(part) * scale);
  const words = text.split(/(\s+)/u);
  const prefix = (k: number) => `${words.slice(0, k).join("").trimEnd()}…`;
  let lo = 0;
  let hi = words.length;
  // Counts grow with the prefix: the longest prefix within budget, by bisection.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(prefix(mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  if (lo === 0) return { text: "", tokens: 0 };
  const cut = prefix(lo);
  return { text: cut, tokens: count(cut) };
}
