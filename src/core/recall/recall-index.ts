import { compareText } from "../model/text.js";
import { isRecallNote, isRecord } from "./note-check.js";
import type { RecallNote } from "./notes.js";
import { recallTerms } from "./terms.js";

/**
 * The recall index: one document per note, weighed once (BM25's term-frequency part, topic
 * postings, exact-topic phrases, a recency prior), and its plain JSON form for the cache a
 * command line loads. Inverse document frequencies are left to query time, so that memory
 * and the repository's history, indexed apart (they change apart), are ranked as one
 * collection. `recall.ts` ranks queries over one or more of them.
 */

// BM25 parameters, the usual defaults.
export const K1 = 1.2;
const B = 0.75;
/** A decision's reason and a commit's body say less about the note than its text does. */
const RATIONALE_WEIGHT = 0.5;
/** Longest topic, in terms, matched as an exact phrase. */
export const MAX_PHRASE_TERMS = 8;
const RECENCY_HALF_LIFE_DAYS = 30;

export interface Postings {
  /** Notes whose text or topics hold the term. */
  df: number;
  textDocs: Int32Array;
  /** BM25's term-frequency part per text posting; multiplied by the idf at query time. */
  textWeights: Float64Array;
  topicDocs: Int32Array;
}

export interface StoredNote {
  note: RecallNote;
  /** Recency in [0, 1]: 1 for the newest note of the index, halving every 30 days. */
  recency: number;
}

/**
 * What `rankNotes` reads of an index: the postings of a term, the notes with an exact topic,
 * a note by number (numbers in id order, each id once). `RecallIndex` is one; the context index serves
 * another from its file, reading only what a query touches.
 */
export interface RankSource {
  readonly size: number;
  postings(term: string): Postings | undefined;
  /** The notes with this exact topic (its terms joined by spaces). */
  phrase(terms: string): Int32Array | undefined;
  /** Every touched note's prior is read: these, unlike `note`, never read a record. */
  scopeOf(d: number): RecallNote["scope"];
  recencyOf(d: number): number;
  note(d: number): StoredNote;
}

/** An inverted index over recall notes, built once by `buildRecallIndex`. */
export class RecallIndex implements RankSource {
  constructor(
    readonly notes: readonly StoredNote[],
    readonly terms: ReadonlyMap<string, Postings>,
    /** Topic terms joined by spaces -> the notes with that exact topic. */
    readonly phrases: ReadonlyMap<string, Int32Array>,
  ) {}

  get size(): number {
    return this.notes.length;
  }

  postings(term: string): Postings | undefined {
    return this.terms.get(term);
  }

  phrase(terms: string): Int32Array | undefined {
    return this.phrases.get(terms);
  }

  scopeOf(d: number): RecallNote["scope"] {
    return (this.notes[d] as StoredNote).note.scope;
  }

  recencyOf(d: number): number {
    return (this.notes[d] as StoredNote).recency;
  }

  note(d: number): StoredNote {
    return this.notes[d] as StoredNote;
  }
}

/** Builds the index once; a query then touches only the postings of its terms. */
export function buildRecallIndex(input: Iterable<RecallNote>): RecallIndex {
  const unique = new Map<string, RecallNote>();
  for (const note of input) if (!unique.has(note.id)) unique.set(note.id, note);
  // Sorted by id, so a note's position is the ranking's tie-break.
  const sorted = [...unique.values()].sort((a, b) => compareText(a.id, b.id));
  const n = sorted.length;

  const textPostings = new Map<string, { docs: number[]; tfs: number[] }>();
  const topicPostings = new Map<string, number[]>();
  const phraseDocs = new Map<string, number[]>();
  const lengths = new Float64Array(n);
  const tfsOf: Map<string, number>[] = [];
  let totalLength = 0;

  sorted.forEach((note, d) => {
    const tf = new Map<string, number>();
    let length = 0;
    const count = (text: string, weight: number) => {
      for (const t of recallTerms(text)) {
        tf.set(t, (tf.get(t) ?? 0) + weight);
        length += weight;
      }
    };
    count(note.text, 1);
    if (note.rationale !== undefined) count(note.rationale, RATIONALE_WEIGHT);
    lengths[d] = length;
    totalLength += length;
    tfsOf.push(tf);

    const topicTerms = new Set<string>();
    for (const topic of note.topics) {
      const terms = recallTerms(topic);
      for (const t of terms) topicTerms.add(t);
      if (terms.length > 0 && terms.length <= MAX_PHRASE_TERMS) {
        entry(phraseDocs, terms.join(" "), () => []).push(d);
      }
    }
    for (const t of topicTerms) entry(topicPostings, t, () => []).push(d);
  });

  const avgLength = n > 0 && totalLength > 0 ? totalLength / n : 1;
  tfsOf.forEach((tf, d) => {
    const norm = K1 * (1 - B + (B * (lengths[d] as number)) / avgLength);
    for (const [t, f] of tf) {
      const p = entry(textPostings, t, () => ({ docs: [] as number[], tfs: [] as number[] }));
      p.docs.push(d);
      p.tfs.push((f * (K1 + 1)) / (f + norm));
    }
  });

  const terms = new Map<string, Postings>();
  const names = new Set([...textPostings.keys(), ...topicPostings.keys()]);
  for (const t of [...names].sort(compareText)) {
    const text = textPostings.get(t);
    const topics = topicPostings.get(t) ?? [];
    const docs = new Set([...(text?.docs ?? []), ...topics]);
    terms.set(t, {
      df: docs.size,
      textDocs: Int32Array.from(text?.docs ?? []),
      textWeights: Float64Array.from(text?.tfs ?? []),
      topicDocs: Int32Array.from(topics),
    });
  }
  const phrases = new Map<string, Int32Array>();
  for (const [phrase, ds] of phraseDocs) phrases.set(phrase, Int32Array.from(new Set(ds)));

  const times = sorted.map((note) => Date.parse(note.at));
  let newest = Number.NEGATIVE_INFINITY;
  for (const t of times) if (Number.isFinite(t) && t > newest) newest = t;
  const stored = sorted.map((note, d): StoredNote => {
    const t = times[d] as number;
    const ageDays = Number.isFinite(t) ? (newest - t) / 86_400_000 : Number.POSITIVE_INFINITY;
    return { note, recency: 2 ** (-ageDays / RECENCY_HALF_LIFE_DAYS) };
  });
  return new RecallIndex(stored, terms, phrases);
}

/**
 * A built index as plain JSON, so a command line can load it instead of rebuilding it. What
 * the notes of one engram share (its id, path, scope, time, topics, senders) is written once,
 * and the postings as base64 typed arrays: a cache of 50,000 notes loads in a fraction of
 * the time number arrays take to parse.
 */
export interface SerializedRecallIndex {
  format: "engram-recall-index/v5";
  /** engram_id or null, path or null, scope, at, topics, senders */
  origins: [string | null, string | null, RecallNote["scope"], string, string[], string[]][];
  /** origin, the note's fields that its origin does not give */
  notes: [number, Partial<RecallNote>][];
  /** Float32, one per note. */
  recency: string;
  /** term, df, text docs (Int32), text weights (Float32), topic docs (Int32) */
  terms: [string, number, string, string, string][];
  /** phrase, docs (Int32) */
  phrases: [string, string][];
}

const SHARED = ["engram_id", "path", "scope", "at", "topics", "senders"] as const;

export function serializeRecallIndex(index: RecallIndex): SerializedRecallIndex {
  const origins: SerializedRecallIndex["origins"] = [];
  const originOf = new Map<string, number>();
  const notes: SerializedRecallIndex["notes"] = index.notes.map(({ note }) => {
    const shared = [
      note.engram_id ?? null,
      note.path ?? null,
      note.scope,
      note.at,
      [...note.topics],
      [...note.senders],
    ] as SerializedRecallIndex["origins"][number];
    const key = JSON.stringify(shared);
    let origin = originOf.get(key);
    if (origin === undefined) {
      origin = origins.length;
      origins.push(shared);
      originOf.set(key, origin);
    }
    const own: Partial<RecallNote> = { ...note };
    for (const field of SHARED) delete own[field];
    return [origin, own];
  });
  return {
    format: "engram-recall-index/v5",
    origins,
    notes,
    recency: base64(Float32Array.from(index.notes, (n) => n.recency)),
    terms: [...index.terms].map(([t, p]) => [
      t,
      p.df,
      base64(p.textDocs),
      base64(Float32Array.from(p.textWeights)),
      base64(p.topicDocs),
    ]),
    phrases: [...index.phrases].map(([phrase, docs]) => [phrase, base64(docs)]),
  };
}

/**
 * The index `serializeRecallIndex` wrote; `undefined` for anything else (rebuild then). The
 * cache is untrusted input: every note is checked field by field, every posting must name a
 * note of the index and every weight be a finite number, so a damaged or planted cache can
 * neither throw in a query nor bend a ranking with an infinite or NaN score.
 */
export function deserializeRecallIndex(data: unknown): RecallIndex | undefined {
  try {
    return deserialize(data);
  } catch {
    return undefined;
  }
}

function deserialize(data: unknown): RecallIndex | undefined {
  const d = data as Partial<SerializedRecallIndex> | null;
  if (
    d?.format !== "engram-recall-index/v5" ||
    !Array.isArray(d.origins) ||
    !Array.isArray(d.notes) ||
    !Array.isArray(d.terms) ||
    !Array.isArray(d.phrases) ||
    typeof d.recency !== "string"
  ) {
    return undefined;
  }
  const origins: Partial<RecallNote>[] = [];
  for (const origin of d.origins) {
    if (!Array.isArray(origin) || origin.length !== 6) return undefined;
    const [engram_id, path, scope, at, topics, senders] = origin;
    origins.push({
      ...(engram_id !== null ? { engram_id } : {}),
      ...(path !== null ? { path } : {}),
      scope,
      at,
      topics,
      senders,
    });
  }
  const recency = new Float32Array(bytes(d.recency));
  if (recency.length !== d.notes.length || !recency.every(Number.isFinite)) return undefined;
  const notes: StoredNote[] = [];
  for (const [i, entry] of d.notes.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || !isRecord(entry[1])) return undefined;
    const shared = typeof entry[0] === "number" ? origins[entry[0]] : undefined;
    if (shared === undefined) return undefined;
    const note: unknown = { ...shared, ...entry[1] };
    if (!isRecallNote(note)) return undefined;
    notes.push({ note, recency: recency[i] as number });
  }
  // A posting must name a note of this index: a damaged cache is rebuilt, not trusted.
  const inRange = (docs: Int32Array) => docs.every((doc) => doc >= 0 && doc < notes.length);
  const terms = new Map<string, Postings>();
  for (const entry of d.terms) {
    if (!Array.isArray(entry) || entry.length !== 5) return undefined;
    const [t, df, textDocs, textWeights, topicDocs] = entry;
    if (typeof t !== "string" || !Number.isInteger(df) || df < 0 || df > notes.length)
      return undefined;
    const p = {
      df,
      textDocs: new Int32Array(bytes(textDocs)),
      textWeights: Float64Array.from(new Float32Array(bytes(textWeights))),
      topicDocs: new Int32Array(bytes(topicDocs)),
    };
    if (!inRange(p.textDocs) || !inRange(p.topicDocs)) return undefined;
    if (p.textWeights.length !== p.textDocs.length) return undefined;
    if (!p.textWeights.every(Number.isFinite)) return undefined;
    terms.set(t, p);
  }
  const phrases = new Map<string, Int32Array>();
  for (const entry of d.phrases) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== "string")
      return undefined;
    const list = new Int32Array(bytes(entry[1]));
    if (!inRange(list)) return undefined;
    phrases.set(entry[0], list);
  }
  return new RecallIndex(notes, terms, phrases);
}

function base64(array: Int32Array | Float32Array): string {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString("base64");
}

/** The bytes of a base64 string, in a buffer of their own (typed arrays need alignment). */
function bytes(text: unknown): ArrayBuffer {
  if (typeof text !== "string") throw new TypeError("expected base64 text");
  const buffer = Buffer.from(text, "base64");
  const out = new ArrayBuffer(buffer.length - (buffer.length % 4));
  new Uint8Array(out).set(buffer.subarray(0, out.byteLength));
  return out;
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
