import {
  buildLearningRecall,
  type LearningRecall,
  type LearningRecallArrays,
  learningRecallArrays,
  learningRecallSource,
} from "./context-rank.js";
import type { EntityId, LinkedLearning } from "./entities.js";
import type { LearningType } from "./learnings.js";

/** Learning types by code: the index stores one byte per learning. */
export const LEARNING_TYPES: readonly LearningType[] = [
  "decision",
  "insight",
  "pattern",
  "convention",
  "self_knowledge",
];

/** A list of lists as two flat arrays: list `i` is `refs[offsets[i]..offsets[i+1]]`. */
export interface Postings {
  offsets: Uint32Array;
  refs: Uint32Array;
}

/**
 * What a topic query needs of every learning, precomputed once per catalog so that a query
 * reads postings instead of re-tokenizing every learning. Learning `i` is the `i`-th in id
 * order; entities and terms are sorted (code units), so every list is in a fixed order and
 * the index of the same learnings is the same bytes.
 */
export interface ContextIndex {
  count: number;
  types: Uint8Array;
  evidence: Uint32Array;
  /** Entity ids, sorted. */
  entities: string[];
  /**
   * Per learning, the entities that relate it to others (indices into `entities`,
   * ascending): its entities less those every learning of its engram shares (an engram's
   * links, when it states several learnings), which say nothing about any one of them.
   */
  learningEntities: Postings;
  /** Per entity, the learnings it relates (the inverse of `learningEntities`, ascending). */
  entityLearnings: Postings;
  /** One note per learning, ranked by memory's one ranking (`rankNotes`), as recall ranks. */
  recall: LearningRecallArrays;
  /** Per learning, the UTF-8 JSON of what rendering needs: `[id, text, rationale, engram_id]`. */
  records: Records;
}

/**
 * The records as one byte string with offsets; `read` returns bytes `start..end`, so a
 * stored index can leave the (largest) record section on disk and read only what is rendered.
 */
export interface Records {
  offsets: Uint32Array;
  read(start: number, end: number): Uint8Array;
}

/** What rendering needs of one learning, decoded only for the learnings rendered. */
export interface LearningRecord {
  id: string;
  type: LearningType;
  text: string;
  rationale: string | null;
  engram_id: string;
  evidence: number;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function postings(lists: readonly (readonly number[])[]): Postings {
  const offsets = new Uint32Array(lists.length + 1);
  let total = 0;
  for (let i = 0; i < lists.length; i++) {
    total += (lists[i] as number[]).length;
    offsets[i + 1] = total;
  }
  const refs = new Uint32Array(total);
  for (let i = 0; i < lists.length; i++) refs.set(lists[i] as number[], offsets[i]);
  return { offsets, refs };
}

export function buildContextIndex(learnings: readonly LinkedLearning[]): ContextIndex {
  const ordered = [...learnings].sort((a, b) => a.id.localeCompare(b.id));
  const entitySet = new Set<EntityId>();
  for (const l of ordered) for (const e of l.entities) entitySet.add(e);
  const entities = [...entitySet].sort(byCodeUnits);
  const entityNo = new Map(entities.map((e, i) => [e, i]));
  const perEntity: number[][] = entities.map(() => []);
  const perLearning: number[][] = [];
  const shared = sharedInEngram(ordered);
  const types = new Uint8Array(ordered.length);
  const evidence = new Uint32Array(ordered.length);
  const encoder = new TextEncoder();
  const recordBytes: Uint8Array[] = [];
  ordered.forEach((l, i) => {
    types[i] = LEARNING_TYPES.indexOf(l.type);
    evidence[i] = l.evidence;
    const all = [...new Set(l.entities.map((e) => entityNo.get(e) as number))].sort(
      (a, b) => a - b,
    );
    const common = shared.get(l.engrams[0] as string);
    const refs = common === undefined ? all : all.filter((r) => !common.has(entities[r] as string));
    perLearning.push(refs);
    for (const r of refs) (perEntity[r] as number[]).push(i);
    recordBytes.push(
      encoder.encode(JSON.stringify([l.id, l.text, l.rationale, l.engrams[0] as string])),
    );
  });
  const recordOffsets = new Uint32Array(ordered.length + 1);
  let size = 0;
  recordBytes.forEach((b, i) => {
    size += b.length;
    recordOffsets[i + 1] = size;
  });
  const bytes = new Uint8Array(size);
  recordBytes.forEach((b, i) => {
    bytes.set(b, recordOffsets[i]);
  });
  return {
    count: ordered.length,
    types,
    evidence,
    entities,
    learningEntities: postings(perLearning),
    entityLearnings: postings(perEntity),
    recall: learningRecallArrays(buildLearningRecall(ordered)),
    records: { offsets: recordOffsets, read: (start, end) => bytes.subarray(start, end) },
  };
}

/**
 * Per engram stating two learnings or more (by the engram a learning is read from), the
 * entities all of them carry: an engram's links and senders are every learning's, so a
 * history import's commits would relate each of its decisions to all the others.
 */
function sharedInEngram(learnings: readonly LinkedLearning[]): Map<string, Set<EntityId>> {
  const groups = new Map<string, LinkedLearning[]>();
  for (const l of learnings) {
    const home = l.engrams[0];
    if (home === undefined) continue;
    const group = groups.get(home);
    if (group) group.push(l);
    else groups.set(home, [l]);
  }
  const out = new Map<string, Set<EntityId>>();
  for (const [home, group] of groups) {
    if (group.length < 2) continue;
    let common = new Set((group[0] as LinkedLearning).entities);
    for (const l of group.slice(1)) {
      const mine = new Set(l.entities);
      common = new Set([...common].filter((e) => mine.has(e)));
      if (common.size === 0) break;
    }
    if (common.size > 0) out.set(home, common);
  }
  return out;
}

function slice(p: Postings, i: number): Uint32Array {
  return p.refs.subarray(p.offsets[i], p.offsets[i + 1]);
}

/** Where `key` is in `sorted` (code-unit order), or -1. */
export function indexInSorted(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = sorted[mid] as string;
    if (at === key) return mid;
    if (at < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Read access to an index: postings by entity, records decoded on demand. */
export class ContextIndexReader {
  private readonly decoder = new TextDecoder();
  private urls: Uint8Array | undefined;
  private ranking: LearningRecall | undefined;

  constructor(readonly index: ContextIndex) {}

  get count(): number {
    return this.index.count;
  }

  type(i: number): LearningType {
    return LEARNING_TYPES[this.index.types[i] as number] as LearningType;
  }

  evidence(i: number): number {
    return this.index.evidence[i] as number;
  }

  entityName(e: number): EntityId {
    return this.index.entities[e] as string;
  }

  /** Whether entity `e` is a URL: a link target, not something learnings are about. */
  isUrl(e: number): boolean {
    return this.urlFlags()[e] === 1;
  }

  /** Per entity, 1 when it is a URL (as `isUrl`), for loops over many entities. */
  urlFlags(): Uint8Array {
    if (this.urls === undefined) {
      const urls = new Uint8Array(this.index.entities.length);
      this.index.entities.forEach((name, k) => {
        if (name.startsWith("url:")) urls[k] = 1;
      });
      this.urls = urls;
    }
    return this.urls;
  }

  entitiesOf(i: number): Uint32Array {
    return slice(this.index.learningEntities, i);
  }

  learningsOf(e: number): Uint32Array {
    return slice(this.index.entityLearnings, e);
  }

  /** The ranking's view of the learnings: postings read as a query asks for them. */
  recall(): LearningRecall {
    this.ranking ??= learningRecallSource(this.index.recall, this.count, (i) => this.record(i));
    if (this.ranking === undefined) throw new Error("context index: its ranking arrays do not fit");
    return this.ranking;
  }

  record(i: number): LearningRecord {
    const { offsets, read } = this.index.records;
    const [id, text, rationale, engramId] = JSON.parse(
      this.decoder.decode(read(offsets[i] as number, offsets[i + 1] as number)),
    ) as [string, string, string | null, string];
    return {
      id,
      type: this.type(i),
      text,
      rationale,
      engram_id: engramId,
      evidence: this.evidence(i),
    };
  }
}
