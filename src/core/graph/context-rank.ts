import type { RecallNote, RecallNoteKind } from "../recall/notes.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallIndex,
  type SerializedRecallIndex,
  serializeRecallIndex,
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
  index: RecallIndex;
  /** Per note of `index`, the learning it stands for (its number in the context index). */
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
export function buildLearningRecall(ordered: readonly LinkedLearning[]): LearningRecall {
  const index = buildRecallIndex(ordered.map(learningNote));
  const at = new Map(ordered.map((l, i) => [l.id, i]));
  const positions = Int32Array.from(index.notes, ({ note }) => at.get(note.id) as number);
  return { index, positions };
}

export interface SerializedLearningRecall {
  index: SerializedRecallIndex;
  positions: number[];
}

export function serializeLearningRecall(r: LearningRecall): SerializedLearningRecall {
  return { index: serializeRecallIndex(r.index), positions: [...r.positions] };
}

/**
 * The ranking index a cache stored for `count` learnings; `undefined` when it is damaged or
 * not one (a position out of range or said twice): the context index is rebuilt then.
 */
export function deserializeLearningRecall(
  data: unknown,
  count: number,
): LearningRecall | undefined {
  const d = data as Partial<SerializedLearningRecall> | null;
  if (d === null || typeof d !== "object" || !Array.isArray(d.positions)) return undefined;
  const index = deserializeRecallIndex(d.index);
  if (index === undefined || index.size !== count || d.positions.length !== count) return undefined;
  const seen = new Uint8Array(count);
  for (const p of d.positions) {
    if (!Number.isInteger(p) || p < 0 || p >= count || seen[p] === 1) return undefined;
    seen[p] = 1;
  }
  return { index, positions: Int32Array.from(d.positions) };
}
