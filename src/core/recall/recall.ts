import { fitHits } from "./fit.js";
import type { RecallHit } from "./hit.js";
import { claimOf, type RecallNote, type RecallScope } from "./notes.js";
import { K1, MAX_PHRASE_TERMS, RecallIndex, type StoredNote } from "./recall-index.js";
import { recallTerms, termWeight } from "./terms.js";

export type { RecallHit } from "./hit.js";
export {
  buildRecallIndex,
  deserializeRecallIndex,
  RecallIndex,
  type SerializedRecallIndex,
  serializeRecallIndex,
} from "./recall-index.js";
export { recallTerms, termWeight } from "./terms.js";
export { tokenize } from "./tokenize.js";

export interface RecallOptions {
  /** Most hits returned; 10 by default. */
  limit?: number;
  /** Only notes of these scopes (default: all). */
  scopes?: readonly RecallScope[];
  /** Also notes an LT engram carried forward (their ST copies, until eviction). */
  includeSuperseded?: boolean;
  /** Most tokens of text the hits hold together (none by default). */
  maxTokens?: number;
}

const MAX_QUERY_TERMS = 32; // one bit each in a Uint32 mask
const DEFAULT_LIMIT = 10;
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
/** How many notes, beyond the limit, are re-scored for proximity. */
const RERANK_DEPTH = 40;

interface Candidate {
  index: RecallIndex;
  d: number;
  score: number;
  mask: number;
}

/**
 * Ranked recall over one or more indexes (memory, the repository's history) as one
 * collection: BM25 over each note's text (a decision's reason and a commit's body at half
 * weight), light stems, question words ignored; topic terms and exact topics add to a
 * text match; query terms next to each other in the note add a proximity bonus; recency and
 * tier break near-ties. A note said in several engrams is one hit (its best); a note an LT
 * engram carried forward is left out in favour of the LT copy. Ties go to the smaller id.
 */
export function recall(
  indexes: RecallIndex | readonly RecallIndex[],
  query: string,
  options: RecallOptions = {},
): RecallHit[] {
  const list = (Array.isArray(indexes) ? indexes : [indexes]) as RecallIndex[];
  for (const index of list) {
    if (!(index instanceof RecallIndex))
      throw new TypeError("recall: index was not built by buildRecallIndex");
  }
  const limit = options.limit === undefined ? DEFAULT_LIMIT : Math.floor(options.limit);
  const sequence = recallTerms(query).slice(0, MAX_QUERY_TERMS * 4);
  const terms = [...new Set(sequence)].slice(0, MAX_QUERY_TERMS);
  const total = list.reduce((n, index) => n + index.size, 0);
  if (terms.length === 0 || !(limit > 0) || total === 0) return [];

  // One collection: a term's document frequency summed over the indexes.
  const idf = terms.map((t) => {
    let df = 0;
    for (const index of list) df += index.terms.get(t)?.df ?? 0;
    return termWeight(df, total);
  });
  const scopes = options.scopes ? new Set(options.scopes) : undefined;
  const keep = (note: RecallNote) =>
    (!scopes || scopes.has(note.scope)) &&
    (options.includeSuperseded === true || (note.superseded_by?.length ?? 0) === 0);
  // The best few by text score; a claim said twice takes two places, so keep room for it.
  const depth = limit + RERANK_DEPTH;
  const best = new TopK(depth * 2);
  for (const index of list) collect(index, sequence, terms, idf, keep, best);

  // Proximity needs the note's words in order: only the best few are read again.
  const head = best.sorted().slice(0, depth);
  for (const c of head) c.score += proximity(c, terms, idf);
  head.sort(byScore);

  const seen = new Set<string>();
  const top: Candidate[] = [];
  for (const c of head) {
    const { note } = c.index.notes[c.d] as StoredNote;
    // The same claim said twice is one hit; an asked-for superseded copy is its own.
    const claim = claimOf(note);
    const key = (note.superseded_by?.length ?? 0) > 0 ? `${claim}\0${note.id}` : claim;
    if (seen.has(key)) continue;
    seen.add(key);
    top.push(c);
    if (top.length === limit) break;
  }
  const hits = top.map((c) => hitOf(c, terms));
  const counts = top.map((c) => (c.index.notes[c.d] as StoredNote).note.tokens);
  return fitHits(hits, counts, options.maxTokens ?? Number.POSITIVE_INFINITY);
}

/** Scores every note of `index` holding a query term, offering each to `best`. */
function collect(
  index: RecallIndex,
  sequence: readonly string[],
  terms: readonly string[],
  idf: readonly number[],
  keep: (note: RecallNote) => boolean,
  best: TopK,
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
    const p = index.terms.get(term);
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
      const docs = index.phrases.get(phrase);
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
    const { note, recency } = index.notes[d] as StoredNote;
    const prior =
      (1 + RECENCY_WEIGHT * recency + (note.scope === "lt" ? LT_WEIGHT : 0)) *
      (note.scope === "history" ? HISTORY_WEIGHT : 1);
    const score = (scores[d] as number) * prior;
    if (!best.wants(score) || !keep(note)) continue;
    best.offer({ index, d, score, mask: masks[d] as number });
  }
}

/** The `size` best candidates seen, by `byScore`, kept in order as they arrive. */
class TopK {
  private readonly items: Candidate[] = [];
  constructor(private readonly size: number) {}

  /** Whether a candidate of this score could enter (a tie is decided by `offer`). */
  wants(score: number): boolean {
    const worst = this.items[this.items.length - 1];
    return this.items.length < this.size || worst === undefined || score >= worst.score;
  }

  offer(c: Candidate): void {
    let at = this.items.length;
    while (at > 0 && byScore(c, this.items[at - 1] as Candidate) < 0) at--;
    if (at >= this.size) return;
    this.items.splice(at, 0, c);
    if (this.items.length > this.size) this.items.pop();
  }

  sorted(): Candidate[] {
    return [...this.items];
  }
}

/**
 * The proximity bonus: for each pair of query terms next to each other in the query that
 * stand within two words of each other, in order, in the note's text.
 */
function proximity(c: Candidate, terms: readonly string[], idf: readonly number[]): number {
  if (terms.length < 2) return 0;
  const { note } = c.index.notes[c.d] as StoredNote;
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

function byScore(a: Candidate, b: Candidate): number {
  if (a.score !== b.score) return b.score - a.score;
  const idA = (a.index.notes[a.d] as StoredNote).note.id;
  const idB = (b.index.notes[b.d] as StoredNote).note.id;
  return idA < idB ? -1 : idA > idB ? 1 : 0;
}

function hitOf(c: Candidate, terms: readonly string[]): RecallHit {
  const note: RecallNote = (c.index.notes[c.d] as StoredNote).note;
  const matched = terms.filter((_, i) => (c.mask & (1 << i)) !== 0);
  return {
    id: note.id,
    kind: note.kind,
    text: note.text,
    ...(note.rationale !== undefined ? { rationale: note.rationale } : {}),
    scope: note.scope,
    ...(note.engram_id !== undefined ? { engram_id: note.engram_id } : {}),
    ...(note.path !== undefined ? { path: note.path } : {}),
    ...(note.commit !== undefined ? { commit: note.commit } : {}),
    ...(note.outcome !== undefined ? { outcome: note.outcome } : {}),
    ...(note.confidence !== undefined ? { confidence: note.confidence } : {}),
    at: note.at,
    senders: [...note.senders],
    topics: [...note.topics],
    score: Math.round(c.score * 1000) / 1000,
    matched,
    tokens: 0,
    ...((note.superseded_by?.length ?? 0) > 0
      ? { superseded_by: [...(note.superseded_by as string[])] }
      : {}),
  };
}
