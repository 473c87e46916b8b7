import { truncateChars } from "../model/text.js";
import {
  InvertedIndex,
  MAX_PHRASE_TERMS,
  type RecallDoc,
  type RecallIndex,
  type StoredDoc,
  TOPIC_WEIGHT,
} from "./recall-index.js";
import { tokenize } from "./tokenize.js";

// The index is built in its own module; callers of this one still find it here.
export {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallDoc,
  type RecallIndex,
  type RecallKnowledge,
  recallDocFromEngram,
  recallDocFromKnowledge,
  type SerializedRecallIndex,
  serializeRecallIndex,
  supersededBy,
} from "./recall-index.js";
export { tokenize };

/** One ranked result of `recall`. */
export interface RecallHit {
  engram_id: string;
  path: string;
  scope: "st" | "lt";
  version: string;
  score: number;
  topics: string[];
  /** The query tokens that matched this engram, in query order. */
  matched: string[];
  /** The best-matching fact or decision title, cut to about 200 characters. */
  snippet: string;
  /** When the snippet is a decision's title: why it was decided, cut to about 300 characters. */
  rationale?: string;
  /** Only with `includeSuperseded`: the LT engrams that superseded this one. */
  superseded_by?: string[];
}

export interface RecallOptions {
  /** Most hits returned; 10 by default. */
  limit?: number;
  /** Only engrams of this tier. */
  scope?: "st" | "lt";
  /**
   * Also return engrams an LT engram superseded (its ST sources, until eviction). Off by
   * default, so a promoted lesson is returned once, as the LT engram.
   */
  includeSuperseded?: boolean;
}

const MAX_QUERY_TERMS = 32; // one bit each in a Uint32 mask
const SNIPPET_MAX_CHARS = 200;
const RATIONALE_MAX_CHARS = 300;
const DEFAULT_LIMIT = 10;

/**
 * Ranked recall: BM25 over facts and decisions, topic tokens weighted higher and exact topics
 * highest, scaled by recency (relative to the newest engram in the index, never a clock) and
 * tier (LT boost). Ties go to the smaller engram_id. An empty query gives no hits.
 */
export function recall(
  index: RecallIndex,
  query: string,
  options: RecallOptions = {},
): RecallHit[] {
  if (!(index instanceof InvertedIndex))
    throw new TypeError("recall: index was not built by buildRecallIndex");
  const limit = options.limit === undefined ? DEFAULT_LIMIT : Math.floor(options.limit);
  const sequence = tokenize(query).slice(0, MAX_QUERY_TERMS * 4);
  const terms = [...new Set(sequence)].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0 || !(limit > 0) || index.size === 0) return [];

  const scores = new Float64Array(index.size);
  const masks = new Uint32Array(index.size);
  const touched: number[] = [];
  const hit = (d: number, score: number, bit: number) => {
    if (masks[d] === 0) touched.push(d);
    scores[d] = (scores[d] as number) + score;
    masks[d] = (masks[d] as number) | bit;
  };

  terms.forEach((term, i) => {
    const p = index.terms.get(term);
    if (!p) return;
    const bit = 1 << i;
    for (let k = 0; k < p.textDocs.length; k++) {
      hit(p.textDocs[k] as number, p.idf * (p.textWeights[k] as number), bit);
    }
    const topic = TOPIC_WEIGHT * p.idf;
    for (const d of p.topicDocs) hit(d, topic, bit);
  });

  // Exact topics: every contiguous run of query tokens that equals a whole topic.
  const seenPhrases = new Set<string>();
  for (let start = 0; start < sequence.length; start++) {
    for (let end = start + 1; end <= Math.min(sequence.length, start + MAX_PHRASE_TERMS); end++) {
      const phrase = sequence.slice(start, end).join(" ");
      if (seenPhrases.has(phrase)) continue;
      seenPhrases.add(phrase);
      const p = index.phrases.get(phrase);
      if (!p) continue;
      let bits = 0;
      for (const t of sequence.slice(start, end)) {
        const i = terms.indexOf(t);
        if (i >= 0) bits |= 1 << i;
      }
      if (bits === 0) continue;
      for (const d of p.docs) hit(d, p.bonus, bits);
    }
  }

  // Bounded insertion: `limit` is small, the touched set may not be.
  const top: { d: number; score: number }[] = [];
  for (const d of touched) {
    const stored = index.docs[d] as StoredDoc;
    if (options.scope !== undefined && stored.doc.scope !== options.scope) continue;
    if (!options.includeSuperseded && (stored.doc.superseded_by?.length ?? 0) > 0) continue;
    const score = (scores[d] as number) * stored.prior;
    const worst = top[top.length - 1];
    if (top.length >= limit && worst && !better(score, d, worst.score, worst.d)) continue;
    let at = top.length;
    while (
      at > 0 &&
      better(score, d, (top[at - 1] as { score: number }).score, (top[at - 1] as { d: number }).d)
    )
      at--;
    top.splice(at, 0, { d, score });
    if (top.length > limit) top.pop();
  }

  return top.map(({ d, score }) => {
    const { doc } = index.docs[d] as StoredDoc;
    const mask = masks[d] as number;
    const matched = terms.filter((_, i) => (mask & (1 << i)) !== 0);
    const { snippet, rationale } = snippetOf(doc, matched);
    return {
      engram_id: doc.engram_id,
      path: doc.path,
      scope: doc.scope,
      version: doc.version,
      score,
      topics: [...doc.topics],
      matched,
      snippet,
      ...(rationale ? { rationale } : {}),
      ...((doc.superseded_by?.length ?? 0) > 0
        ? { superseded_by: [...(doc.superseded_by as string[])] }
        : {}),
    };
  });
}

/** Higher score first; a smaller doc position (smaller engram_id) wins a tie. */
function better(score: number, d: number, otherScore: number, otherD: number): boolean {
  return score > otherScore || (score === otherScore && d < otherD);
}

function snippetOf(
  doc: RecallDoc,
  matched: readonly string[],
): { snippet: string; rationale: string | undefined } {
  const wanted = new Set(matched);
  let best = "";
  let bestRationale: string | undefined;
  let bestCount = 0;
  const consider = (text: string, scored: string, rationale?: string) => {
    let count = 0;
    for (const t of new Set(tokenize(scored))) if (wanted.has(t)) count++;
    if (count > bestCount) {
      best = text;
      bestRationale = rationale;
      bestCount = count;
    }
  };
  for (const fact of doc.facts) consider(fact, fact);
  for (const d of doc.decisions) consider(d.title, `${d.title} ${d.rationale}`, d.rationale);
  if (bestCount === 0) {
    const fallback = doc.facts.length > 0 ? undefined : doc.decisions[0];
    best = doc.facts[0] ?? fallback?.title ?? "";
    bestRationale = fallback?.rationale;
  }
  const oneLine = (text: string, max: number) =>
    truncateChars(text.replace(/\s+/gu, " ").trim(), max);
  const rationale = bestRationale === undefined ? "" : oneLine(bestRationale, RATIONALE_MAX_CHARS);
  return {
    snippet: oneLine(best, SNIPPET_MAX_CHARS),
    rationale: rationale === "" ? undefined : rationale,
  };
}
