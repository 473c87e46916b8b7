import { K1, MAX_PHRASE_TERMS, type RankSource } from "./recall-index.js";
import { recallTerms, termWeight } from "./terms.js";

/**
 * Memory's one ranking: `recall` (the CLI, MCP `memory_recall`, hybrid recall) and
 * `worker context` (MCP `memory_context`) both order what matches a query with `rankNotes`.
 * BM25 over each note's text (a decision's reason and a commit's body at half weight), light
 * stems, question words ignored; topic terms and exact topics add to a text match; query
 * terms next to each other in the note add a proximity bonus; recency and tier break
 * near-ties. Several indexes (memory, the repository's history) are ranked as one collection.
 */

const MAX_QUERY_TERMS = 32; // one bit each in a Uint32 mask
/** A topic is shared by an engram's notes: it adds to a text match, it does not make one. */
const TOPIC_WEIGHT = 0.35;
const EXACT_TOPIC_WEIGHT = 0.5;
/** Two query terms side by side in the note (or one apart), as they are in the query. */
const PROXIMITY_WEIGHT = 0.6;
/** Recency and tier break near-ties; they never outweigh a matched term. */
const RECENCY_WEIGHT = 0.04;
const LT_WEIGHT = 0.03;
/** A commit is the raw record; a note in memory is what the team kept of it. */
const HISTORY_WEIGHT = 0.9;
/** How many notes, beyond those asked for, are re-scored for proximity. */
export const RERANK_DEPTH = 40;

/** One ranked note: `index.note(d)`, its score and the query terms it holds (bit i: term i). */
export interface RankedNote {
  index: RankSource;
  d: number;
  score: number;
  mask: number;
}

export interface RankOptions {
  /** Notes wanted, best first; every matching note when absent. */
  want?: number;
  /** How many of the best by text score are re-scored for proximity (default: `want`). */
  rerank: number;
  /** Which matching notes may be ranked (default: all). */
  keep?: (index: RankSource, d: number) => boolean;
}

export interface Ranking {
  /** The query's terms (stems, repeats and question words gone), in query order. */
  terms: string[];
  /** The ranked notes: the re-scored head, then the rest by text score. */
  ranked: RankedNote[];
}

/** The notes of `indexes` that hold a term of `query`, best first (ties: the smaller id). */
export function rankNotes(
  indexes: readonly RankSource[],
  query: string,
  options: RankOptions,
): Ranking {
  const sequence = recallTerms(query).slice(0, MAX_QUERY_TERMS * 4);
  const terms = [...new Set(sequence)].slice(0, MAX_QUERY_TERMS);
  const total = indexes.reduce((n, index) => n + index.size, 0);
  if (terms.length === 0 || total === 0) return { terms, ranked: [] };

  // One collection: a term's document frequency summed over the indexes.
  const idf = terms.map((t) => {
    let df = 0;
    for (const index of indexes) df += index.postings(t)?.df ?? 0;
    return termWeight(df, total);
  });
  const keep = options.keep ?? (() => true);
  const best = options.want === undefined ? new Every() : new TopK(options.want);
  for (const index of indexes) collect(index, sequence, terms, idf, keep, best);

  // Proximity needs the note's words in order: only the best few are read again.
  const all = best.sorted();
  const head = all.slice(0, options.rerank);
  for (const c of head) c.score += proximity(c, terms, idf);
  head.sort(byScore);
  return { terms, ranked: head.concat(all.slice(options.rerank)) };
}

interface Collector {
  wants(score: number): boolean;
  offer(c: RankedNote): void;
  sorted(): RankedNote[];
}

/** Scores every note of `index` holding a query term, offering each to `best`. */
function collect(
  index: RankSource,
  sequence: readonly string[],
  terms: readonly string[],
  idf: readonly number[],
  keep: (index: RankSource, d: number) => boolean,
  best: Collector,
): void {
  const scores = new Float64Array(index.size);
  const masks = new Int32Array(index.size);
  const touched: number[] = [];
  const hit = (d: number, score: number, bits: number) => {
    if (masks[d] === 0) touched.push(d);
    scores[d] = (scores[d] as number) + score;
    masks[d] = (masks[d] as number) | bits;
  };
  terms.forEach((term, i) => {
    const p = index.postings(term);
    if (!p) return;
    const weight = idf[i] as number;
    const bit = 1 << i;
    for (let k = 0; k < p.textDocs.length; k++) {
      hit(p.textDocs[k] as number, weight * (p.textWeights[k] as number), bit);
    }
    const topic = TOPIC_WEIGHT * weight;
    for (const d of p.topicDocs) hit(d, topic, bit);
  });
  // Exact topics: a run of query terms that is a whole topic.
  const seen = new Set<string>();
  for (let start = 0; start < sequence.length; start++) {
    for (let end = start + 1; end <= Math.min(sequence.length, start + MAX_PHRASE_TERMS); end++) {
      const run = sequence.slice(start, end);
      const phrase = run.join(" ");
      if (seen.has(phrase)) continue;
      seen.add(phrase);
      const docs = index.phrase(phrase);
      if (!docs) continue;
      let bonus = 0;
      let bits = 0;
      for (const t of run) {
        const i = terms.indexOf(t);
        if (i < 0) continue;
        bonus += EXACT_TOPIC_WEIGHT * (idf[i] as number);
        bits |= 1 << i;
      }
      for (const d of docs) hit(d, bonus, bits);
    }
  }
  for (const d of touched) {
    const scope = index.scopeOf(d);
    const prior =
      (1 + RECENCY_WEIGHT * index.recencyOf(d) + (scope === "lt" ? LT_WEIGHT : 0)) *
      (scope === "history" ? HISTORY_WEIGHT : 1);
    const score = (scores[d] as number) * prior;
    if (!best.wants(score) || !keep(index, d)) continue;
    best.offer({ index, d, score, mask: masks[d] as number });
  }
}

/** The `size` best candidates seen, by `byScore`, kept in order as they arrive. */
class TopK implements Collector {
  private readonly items: RankedNote[] = [];
  constructor(private readonly size: number) {}

  /** Whether a candidate of this score could enter (a tie is decided by `offer`). */
  wants(score: number): boolean {
    const worst = this.items[this.items.length - 1];
    return this.items.length < this.size || worst === undefined || score >= worst.score;
  }

  offer(c: RankedNote): void {
    let at = this.items.length;
    while (at > 0 && byScore(c, this.items[at - 1] as RankedNote) < 0) at--;
    if (at >= this.size) return;
    this.items.splice(at, 0, c);
    if (this.items.length > this.size) this.items.pop();
  }

  sorted(): RankedNote[] {
    return [...this.items];
  }
}

/**
 * The proximity bonus: for each pair of query terms next to each other in the query that
 * stand within two words of each other, in order, in the note's text.
 */
function proximity(c: RankedNote, terms: readonly string[], idf: readonly number[]): number {
  if (terms.length < 2) return 0;
  const { note } = c.index.note(c.d);
  const words = recallTerms(note.text);
  const at = new Map<string, number[]>();
  words.forEach((w, i) => {
    const list = at.get(w);
    if (list) list.push(i);
    else at.set(w, [i]);
  });
  let bonus = 0;
  for (let i = 0; i + 1 < terms.length; i++) {
    const a = at.get(terms[i] as string);
    const b = at.get(terms[i + 1] as string);
    if (!a || !b) continue;
    if (a.some((p) => b.some((q) => q > p && q - p <= 2))) {
      bonus += PROXIMITY_WEIGHT * Math.min(idf[i] as number, idf[i + 1] as number);
    }
  }
  return bonus / (K1 + 1);
}

function byScore(a: RankedNote, b: RankedNote): number {
  if (a.score !== b.score) return b.score - a.score;
  // A source numbers its notes in id order: within one, the numbers decide without a read.
  if (a.index === b.index) return a.d - b.d;
  const idA = a.index.note(a.d).note.id;
  const idB = b.index.note(b.d).note.id;
  return idA < idB ? -1 : idA > idB ? 1 : 0;
}

/** Every candidate offered, sorted at the end. */
class Every implements Collector {
  private readonly items: RankedNote[] = [];

  wants(): boolean {
    return true;
  }

  offer(c: RankedNote): void {
    this.items.push(c);
  }

  sorted(): RankedNote[] {
    return this.items.sort(byScore);
  }
}
