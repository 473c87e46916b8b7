import type { RecallNote, RecallNoteKind } from "../recall/notes.js";
import {
  buildRecallIndex,
  type Postings,
  type RankSource,
  type RecallIndex,
  type StoredNote,
} from "../recall/recall-index.js";
import type { LinkedLearning } from "./entities.js";
import type { LearningType } from "./learnings.js";

/**
 * What `worker context` ranks a topic's matches with: memory's one ranking (`rankNotes`, as
 * `worker recall` ranks), over one note per learning of the context index. A learning's note
 * holds its text, its reason, and as topics its own topics and the keys of the entities it
 * links to (`person:ada` gives `ada`), so a topic naming an entity matches as an exact topic.
 */
export interface LearningRecall {
  source: RankSource;
  /** Per note of `source`, the learning it stands for (its number in the context index). */
  positions: Int32Array;
}

const KIND: Record<LearningType, RecallNoteKind> = {
  decision: "decision",
  insight: "lesson",
  convention: "convention",
  pattern: "fact",
  self_knowledge: "fact",
};

/** The note a learning is ranked as. */
export function learningNote(l: LinkedLearning): RecallNote {
  const keys = l.entities
    .filter((e) => !e.startsWith("url:"))
    .map((e) => e.slice(e.indexOf(":") + 1));
  return {
    id: l.id,
    kind: KIND[l.type],
    text: l.text,
    ...(l.rationale ? { rationale: l.rationale } : {}),
    topics: [...new Set([...l.topics, ...keys])],
    scope: l.scope,
    ...(l.engrams[0] !== undefined ? { engram_id: l.engrams[0] } : {}),
    at: l.written_at,
    senders: l.senders,
  };
}

/** The ranking index of `ordered` (the context index's learnings, in its order). */
export function buildLearningRecall(
  ordered: readonly LinkedLearning[],
): LearningRecall & { source: RecallIndex } {
  const source = buildRecallIndex(ordered.map(learningNote));
  const at = new Map(ordered.map((l, i) => [l.id, i]));
  const positions = Int32Array.from(source.notes, ({ note }) => at.get(note.id) as number);
  return { source, positions };
}

/**
 * The ranking index as flat arrays, as the context index file stores it: per note its
 * learning, tier (1: lt) and recency; per term (sorted) its document frequency and text and
 * topic postings; per exact topic its notes. Lists are cut from flat arrays by offsets.
 */
export interface LearningRecallArrays {
  terms: string[];
  phrases: string[];
  positions: Int32Array;
  scopes: Uint32Array;
  recency: Float64Array;
  df: Uint32Array;
  textOffsets: Uint32Array;
  topicOffsets: Uint32Array;
  phraseOffsets: Uint32Array;
  /** Read by range: `(from, to)`, in elements. */
  textDocs: (from: number, to: number) => Int32Array;
  textWeights: (from: number, to: number) => Float64Array;
  topicDocs: (from: number, to: number) => Int32Array;
  phraseDocs: (from: number, to: number) => Int32Array;
}

export function learningRecallArrays(
  r: LearningRecall & { source: RecallIndex },
): LearningRecallArrays {
  const { source } = r;
  const terms = [...source.terms.keys()].sort(byCodeUnits);
  const phrases = [...source.phrases.keys()].sort(byCodeUnits);
  const list = terms.map((t) => source.terms.get(t) as Postings);
  const flat = <T extends Int32Array | Float64Array>(
    parts: readonly T[],
    make: new (n: number) => T,
  ): { offsets: Uint32Array; all: T } => {
    const offsets = new Uint32Array(parts.length + 1);
    parts.forEach((p, i) => {
      offsets[i + 1] = (offsets[i] as number) + p.length;
    });
    const all = new make(offsets[parts.length] as number);
    parts.forEach((p, i) => {
      all.set(p as never, offsets[i]);
    });
    return { offsets, all };
  };
  const text = flat(
    list.map((p) => p.textDocs),
    Int32Array,
  );
  const weights = flat(
    list.map((p) => p.textWeights),
    Float64Array,
  );
  const topics = flat(
    list.map((p) => p.topicDocs),
    Int32Array,
  );
  const phraseDocs = flat(
    phrases.map((p) => source.phrases.get(p) as Int32Array),
    Int32Array,
  );
  return {
    terms,
    phrases,
    positions: r.positions,
    scopes: Uint32Array.from(source.notes, ({ note }) => (note.scope === "lt" ? 1 : 0)),
    recency: Float64Array.from(source.notes, (n) => n.recency),
    df: Uint32Array.from(list, (p) => p.df),
    textOffsets: text.offsets,
    topicOffsets: topics.offsets,
    phraseOffsets: phraseDocs.offsets,
    textDocs: (from, to) => text.all.subarray(from, to),
    textWeights: (from, to) => weights.all.subarray(from, to),
    topicDocs: (from, to) => topics.all.subarray(from, to),
    phraseDocs: (from, to) => phraseDocs.all.subarray(from, to),
  };
}

/**
 * The ranking index over stored arrays for `count` learnings, reading a posting only when a
 * query asks for its term; `record` gives a learning's id and text (for ties and proximity).
 * `undefined` when the arrays do not fit together (a damaged file: rebuild it). A posting
 * read later that names no note or holds a weight that is not finite is read as empty, so
 * a damaged file can cost a match, never a wrong score.
 */
export function learningRecallSource(
  a: LearningRecallArrays,
  count: number,
  record: (learning: number) => { id: string; text: string },
): LearningRecall | undefined {
  const n = a.positions.length;
  if (n !== count || a.scopes.length !== n || a.recency.length !== n) return undefined;
  const seen = new Uint8Array(n);
  for (const p of a.positions) {
    if (p < 0 || p >= n || seen[p] === 1) return undefined;
    seen[p] = 1;
  }
  if (!a.scopes.every((s) => s <= 1) || !a.recency.every(Number.isFinite)) return undefined;
  const t = a.terms.length;
  if (a.df.length !== t || !a.df.every((df) => df <= n)) return undefined;
  if (!monotone(a.textOffsets, t) || !monotone(a.topicOffsets, t)) return undefined;
  if (!monotone(a.phraseOffsets, a.phrases.length)) return undefined;
  if (!sorted(a.terms)) return undefined;
  const phraseAt = new Map(a.phrases.map((p, i) => [p, i]));
  const inRange = (docs: Int32Array) => docs.every((d) => d >= 0 && d < n);
  const notes = new Map<number, StoredNote>();
  const source: RankSource = {
    size: n,
    postings(term) {
      const i = indexOf(a.terms, term);
      if (i < 0) return undefined;
      const [from, to] = [a.textOffsets[i] as number, a.textOffsets[i + 1] as number];
      const textDocs = a.textDocs(from, to);
      const textWeights = a.textWeights(from, to);
      const topicDocs = a.topicDocs(a.topicOffsets[i] as number, a.topicOffsets[i + 1] as number);
      if (!inRange(textDocs) || !inRange(topicDocs) || !textWeights.every(Number.isFinite))
        return undefined;
      return { df: a.df[i] as number, textDocs, textWeights, topicDocs };
    },
    phrase(terms) {
      const i = phraseAt.get(terms);
      if (i === undefined) return undefined;
      const docs = a.phraseDocs(a.phraseOffsets[i] as number, a.phraseOffsets[i + 1] as number);
      return inRange(docs) ? docs : undefined;
    },
    scopeOf: (d) => (a.scopes[d] === 1 ? "lt" : "st"),
    recencyOf: (d) => a.recency[d] as number,
    note(d) {
      let stored = notes.get(d);
      if (stored === undefined) {
        const { id, text } = record(a.positions[d] as number);
        const note: RecallNote = {
          id,
          kind: "fact",
          text,
          topics: [],
          scope: a.scopes[d] === 1 ? "lt" : "st",
          at: "",
          senders: [],
        };
        stored = { note, recency: a.recency[d] as number };
        notes.set(d, stored);
      }
      return stored;
    },
  };
  return { source, positions: a.positions };
}

function monotone(offsets: Uint32Array, lists: number): boolean {
  if (offsets.length !== lists + 1 || offsets[0] !== 0) return false;
  for (let i = 1; i < offsets.length; i++) {
    if ((offsets[i] as number) < (offsets[i - 1] as number)) return false;
  }
  return true;
}

function sorted(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++)
    if (byCodeUnits(list[i - 1] as string, list[i] as string) >= 0) return false;
  return true;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function indexOf(list: readonly string[], key: string): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = list[mid] as string;
    if (at === key) return mid;
    if (at < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
