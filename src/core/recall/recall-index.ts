import type { Engram } from "../../schema/engram.js";
import { engramPath } from "../model/engram.js";
import { compareText } from "../model/text.js";
import { knowledgeFactText } from "../versions/items.js";
import { tokenize } from "./tokenize.js";

/**
 * The recall index: the searchable part of each engram, weighed once (BM25's term weights,
 * topic postings, exact-topic phrases, a recency and tier prior per engram), and its plain
 * JSON form for the cache a command line loads. `recall.ts` ranks queries over it.
 */

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

/** An inverted index over recall documents, built once by `buildRecallIndex`. */
export interface RecallIndex {
  readonly size: number;
}

// BM25 parameters, the usual defaults.
const K1 = 1.2;
const B = 0.75;
// Text matches are worth at most (K1 + 1) * idf; a topic token beats any text match and an
// exact topic beats any topic token.
export const TOPIC_WEIGHT = 3;
const EXACT_TOPIC_WEIGHT = 4;
const RECENCY_WEIGHT = 0.5;
const RECENCY_HALF_LIFE_DAYS = 14;
const LT_BOOST = 1.25;
/** Longest topic, in tokens, matched as an exact phrase. */
export const MAX_PHRASE_TERMS = 8;

export interface Postings {
  idf: number;
  textDocs: Int32Array;
  /** BM25 term-frequency part per text posting; multiplied by idf at query time. */
  textWeights: Float64Array;
  topicDocs: Int32Array;
}

export interface StoredDoc {
  doc: RecallDoc;
  /** Recency and tier factor, in [1, (1 + RECENCY_WEIGHT) * LT_BOOST]. */
  prior: number;
}

export class InvertedIndex implements RecallIndex {
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

/** What a recall document of a session's knowledge record needs of it (`KnowledgeItem`). */
export interface RecallKnowledge {
  id: string;
  path: string;
  kind: "fact" | "lesson" | "convention" | "decision";
  text: string;
  rationale: string | null;
  /** ISO-8601: when the version that added it was made (its recency). */
  written_at: string;
}

/**
 * The recall document of a session's knowledge record: long-term memory like an LT engram's,
 * named by its record id and read from its knowledge file.
 */
export function recallDocFromKnowledge(k: RecallKnowledge): RecallDoc {
  return {
    engram_id: k.id,
    path: k.path,
    scope: "lt",
    version: batchIdOf(k.written_at),
    topics: [],
    facts: k.kind === "decision" ? [] : [knowledgeFactText(k.kind, k.text)],
    decisions: k.kind === "decision" ? [{ title: k.text, rationale: k.rationale ?? "" }] : [],
  };
}

/** `2026-11-20T09:00:00.000Z` -> `20261120-090000Z`, the batch id form recency is read from. */
function batchIdOf(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[1]}${m[2]}${m[3]}-${m[4]}${m[5]}${m[6]}Z` : "";
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
