import type { Engram } from "../../schema/engram.js";
import { engramPath } from "../model/engram.js";
import { compareText, truncateChars } from "../model/text.js";
import { tokenize } from "./tokenize.js";

export { tokenize };

/** The searchable part of one engram. */
export interface RecallDoc {
  engram_id: string;
  path: string;
  scope: "st" | "lt";
  version: string;
  topics: readonly string[];
  facts: readonly string[];
  decisions: readonly { title: string; rationale: string }[];
  /** LT engrams that carry this (ST) engram's content forward: then it is left out by default. */
  superseded_by?: readonly string[];
}

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
  /** Only with `includeSuperseded`: the LT engrams that superseded this one. */
  superseded_by?: string[];
}

/** An inverted index over recall documents, built once by `buildRecallIndex`. */
export interface RecallIndex {
  readonly size: number;
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

// BM25 parameters, the usual defaults.
const K1 = 1.2;
const B = 0.75;
// Text matches are worth at most (K1 + 1) * idf; a topic token beats any text match and an
// exact topic beats any topic token.
const TOPIC_WEIGHT = 3;
const EXACT_TOPIC_WEIGHT = 4;
const RECENCY_WEIGHT = 0.5;
const RECENCY_HALF_LIFE_DAYS = 14;
const LT_BOOST = 1.25;
const MAX_QUERY_TERMS = 32; // one bit each in a Uint32 mask
const MAX_PHRASE_TERMS = 8;
const SNIPPET_MAX_CHARS = 200;
const DEFAULT_LIMIT = 10;

interface Postings {
  idf: number;
  textDocs: Int32Array;
  /** BM25 term-frequency part per text posting; multiplied by idf at query time. */
  textWeights: Float64Array;
  topicDocs: Int32Array;
}

interface StoredDoc {
  doc: RecallDoc;
  /** Recency and tier factor, in [1, (1 + RECENCY_WEIGHT) * LT_BOOST]. */
  prior: number;
}

class InvertedIndex implements RecallIndex {
  constructor(
    readonly docs: readonly StoredDoc[],
    readonly terms: ReadonlyMap<string, Postings>,
    /** Topic token sequence joined by spaces -> its docs and bonus. */
    readonly phrases: ReadonlyMap<string, { docs: Int32Array; bonus: number }>,
  ) {}

  get size(): number {
    return this.docs.length;
  }
}

/** Builds the inverted index once; `recall` then touches only the postings of query terms. */
export function buildRecallIndex(docs: Iterable<RecallDoc>): RecallIndex {
  const unique = new Map<string, RecallDoc>();
  for (const doc of docs) {
    const known = unique.get(doc.engram_id);
    // One doc per id, the newest; independent of input order except for exact twins.
    if (
      !known ||
      compareText(known.version, doc.version) < 0 ||
      (known.version === doc.version && compareText(known.path, doc.path) < 0)
    ) {
      unique.set(doc.engram_id, doc);
    }
  }
  // Sorted by id, so a doc's position is the ranking tie-break.
  const sorted = [...unique.values()].sort((a, b) => compareText(a.engram_id, b.engram_id));
  const n = sorted.length;

  const textPostings = new Map<string, { docs: number[]; tfs: number[] }>();
  const topicPostings = new Map<string, number[]>();
  const phraseDocs = new Map<string, number[]>();
  const df = new Map<string, number>();
  const lengths = new Float64Array(n);
  let totalLength = 0;

  sorted.forEach((doc, d) => {
    const tf = new Map<string, number>();
    let length = 0;
    const count = (text: string) => {
      for (const t of tokenize(text)) {
        tf.set(t, (tf.get(t) ?? 0) + 1);
        length++;
      }
    };
    for (const fact of doc.facts) count(fact);
    for (const decision of doc.decisions) {
      count(decision.title);
      count(decision.rationale);
    }
    lengths[d] = length;
    totalLength += length;

    const topicTerms = new Set<string>();
    const phrases = new Set<string>();
    for (const topic of doc.topics) {
      const tokens = tokenize(topic);
      for (const t of tokens) topicTerms.add(t);
      if (tokens.length > 0 && tokens.length <= MAX_PHRASE_TERMS) phrases.add(tokens.join(" "));
    }

    for (const [t, f] of tf) {
      const p = entry(textPostings, t, () => ({ docs: [] as number[], tfs: [] as number[] }));
      p.docs.push(d);
      p.tfs.push(f);
      df.set(t, (df.get(t) ?? 0) + 1);
    }
    for (const t of topicTerms) {
      entry(topicPostings, t, () => []).push(d);
      if (!tf.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
    }
    for (const phrase of phrases) {
      entry(phraseDocs, phrase, () => []).push(d);
    }
  });

  const avgLength = n > 0 && totalLength > 0 ? totalLength / n : 1;
  const idfOf = (t: string) => {
    const f = df.get(t) ?? 0;
    return Math.log(1 + (n - f + 0.5) / (f + 0.5));
  };
  const terms = new Map<string, Postings>();
  for (const t of df.keys()) {
    const text = textPostings.get(t);
    const weights = new Float64Array(text?.docs.length ?? 0);
    text?.tfs.forEach((f, i) => {
      const length = lengths[text.docs[i] as number] as number;
      weights[i] = (f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / avgLength));
    });
    terms.set(t, {
      idf: idfOf(t),
      textDocs: Int32Array.from(text?.docs ?? []),
      textWeights: weights,
      topicDocs: Int32Array.from(topicPostings.get(t) ?? []),
    });
  }
  const phrases = new Map<string, { docs: Int32Array; bonus: number }>();
  for (const [phrase, ds] of phraseDocs) {
    let bonus = 0;
    for (const t of phrase.split(" ")) bonus += EXACT_TOPIC_WEIGHT * idfOf(t);
    phrases.set(phrase, { docs: Int32Array.from(ds), bonus });
  }

  const times = sorted.map((doc) => batchSeconds(doc.version));
  let newest = Number.NEGATIVE_INFINITY;
  for (const t of times) if (t !== undefined && t > newest) newest = t;
  const stored = sorted.map((doc, d): StoredDoc => {
    const t = times[d];
    const ageDays = t === undefined ? Number.POSITIVE_INFINITY : (newest - t) / 86_400;
    const recency = 2 ** (-ageDays / RECENCY_HALF_LIFE_DAYS);
    const prior = (1 + RECENCY_WEIGHT * recency) * (doc.scope === "lt" ? LT_BOOST : 1);
    return { doc, prior };
  });
  return new InvertedIndex(stored, terms, phrases);
}

/** A built index as plain JSON, so a command line can load it instead of rebuilding it. */
export interface SerializedRecallIndex {
  format: "engram-recall-index/v2";
  docs: { doc: RecallDoc; prior: number }[];
  /** term, idf, text docs, text weights, topic docs */
  terms: [string, number, number[], number[], number[]][];
  /** phrase, docs, bonus */
  phrases: [string, number[], number][];
}

export function serializeRecallIndex(index: RecallIndex): SerializedRecallIndex {
  const inverted = asInverted(index);
  return {
    format: "engram-recall-index/v2",
    docs: inverted.docs.map((d) => ({ doc: d.doc, prior: d.prior })),
    terms: [...inverted.terms].map(([t, p]) => [
      t,
      p.idf,
      [...p.textDocs],
      [...p.textWeights],
      [...p.topicDocs],
    ]),
    phrases: [...inverted.phrases].map(([phrase, p]) => [phrase, [...p.docs], p.bonus]),
  };
}

/** The index `serializeRecallIndex` wrote; `undefined` for anything else (rebuild then). */
export function deserializeRecallIndex(data: unknown): RecallIndex | undefined {
  const d = data as Partial<SerializedRecallIndex> | null;
  if (d?.format !== "engram-recall-index/v2" || !d.docs || !d.terms || !d.phrases) {
    return undefined;
  }
  const terms = new Map<string, Postings>();
  for (const [t, idf, textDocs, textWeights, topicDocs] of d.terms) {
    terms.set(t, {
      idf,
      textDocs: Int32Array.from(textDocs),
      textWeights: Float64Array.from(textWeights),
      topicDocs: Int32Array.from(topicDocs),
    });
  }
  const phrases = new Map<string, { docs: Int32Array; bonus: number }>();
  for (const [phrase, docs, bonus] of d.phrases) {
    phrases.set(phrase, { docs: Int32Array.from(docs), bonus });
  }
  return new InvertedIndex(d.docs, terms, phrases);
}

function asInverted(index: RecallIndex): InvertedIndex {
  if (!(index instanceof InvertedIndex))
    throw new TypeError("not an index built by buildRecallIndex");
  return index;
}

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
    return {
      engram_id: doc.engram_id,
      path: doc.path,
      scope: doc.scope,
      version: doc.version,
      score,
      topics: [...doc.topics],
      matched,
      snippet: snippetOf(doc, matched),
      ...((doc.superseded_by?.length ?? 0) > 0
        ? { superseded_by: [...(doc.superseded_by as string[])] }
        : {}),
    };
  });
}

/** ST engram id -> the LT engrams that supersede it, from the LT engrams' `supersedes`. */
export function supersededBy(engrams: Iterable<Engram>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const engram of engrams) {
    if (engram.scope !== "lt") continue;
    for (const id of engram.supersedes ?? []) entry(out, id, () => []).push(engram.engram_id);
  }
  for (const list of out.values()) list.sort(compareText);
  return out;
}

/** The recall document of an engram: its plain fields, never its sealed ones. */
export function recallDocFromEngram(
  engram: Engram,
  supersededByIds?: readonly string[],
): RecallDoc {
  return {
    ...(supersededByIds !== undefined && supersededByIds.length > 0
      ? { superseded_by: supersededByIds }
      : {}),
    engram_id: engram.engram_id,
    path: engramPath(engram.scope, engram.version, engram.engram_id),
    scope: engram.scope,
    version: engram.version,
    topics: engram.topics,
    facts: engram.facts,
    decisions: engram.decisions.map((d) => ({ title: d.title, rationale: d.rationale })),
  };
}

/** Higher score first; a smaller doc position (smaller engram_id) wins a tie. */
function better(score: number, d: number, otherScore: number, otherD: number): boolean {
  return score > otherScore || (score === otherScore && d < otherD);
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** Seconds since the epoch of a batch id `YYYYMMDD-HHMMSSZ`; undefined if it is not one. */
function batchSeconds(version: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})Z$/.exec(version);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  return Date.UTC(y!, mo! - 1, d, h, mi, s) / 1000;
}

function snippetOf(doc: RecallDoc, matched: readonly string[]): string {
  const wanted = new Set(matched);
  let best = "";
  let bestCount = 0;
  const consider = (text: string, scored: string) => {
    let count = 0;
    for (const t of new Set(tokenize(scored))) if (wanted.has(t)) count++;
    if (count > bestCount) {
      best = text;
      bestCount = count;
    }
  };
  for (const fact of doc.facts) consider(fact, fact);
  for (const d of doc.decisions) consider(d.title, `${d.title} ${d.rationale}`);
  if (bestCount === 0) best = doc.facts[0] ?? doc.decisions[0]?.title ?? "";
  return truncateChars(best.replace(/\s+/gu, " ").trim(), SNIPPET_MAX_CHARS);
}
