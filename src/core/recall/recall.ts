import { fitHits } from "./fit.js";
import type { RecallHit } from "./hit.js";
import { claimOf, type RecallNote, type RecallScope } from "./notes.js";
import { type RankedNote, RERANK_DEPTH, rankNotes } from "./rank.js";
import { type RankSource, RecallIndex } from "./recall-index.js";

export type { RecallHit } from "./hit.js";
export { type RankedNote, rankNotes } from "./rank.js";
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

const DEFAULT_LIMIT = 10;

/**
 * Ranked recall over one or more indexes (memory, the repository's history) as one
 * collection, by memory's one ranking (`rankNotes`): a note said in several engrams is one
 * hit (its best); a note an LT engram carried forward is left out in favour of the LT copy.
 * Ties go to the smaller id.
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
  if (!(limit > 0)) return [];
  const scopes = options.scopes ? new Set(options.scopes) : undefined;
  const keep = (index: RankSource, d: number) => {
    const { note } = index.note(d);
    return (
      (!scopes || scopes.has(note.scope)) &&
      (options.includeSuperseded === true || (note.superseded_by?.length ?? 0) === 0)
    );
  };
  // The best few by text score; a claim said twice takes two places, so keep room for it.
  const depth = limit + RERANK_DEPTH;
  const { terms, ranked } = rankNotes(list, query, { want: depth * 2, rerank: depth, keep });
  const head = ranked.slice(0, depth);

  const seen = new Set<string>();
  const top: RankedNote[] = [];
  for (const c of head) {
    const { note } = c.index.note(c.d);
    // The same claim said twice is one hit; an asked-for superseded copy is its own.
    const claim = claimOf(note);
    const key = (note.superseded_by?.length ?? 0) > 0 ? `${claim}\0${note.id}` : claim;
    if (seen.has(key)) continue;
    seen.add(key);
    top.push(c);
    if (top.length === limit) break;
  }
  const hits = top.map((c) => hitOf(c, terms));
  const counts = top.map((c) => c.index.note(c.d).note.tokens);
  return fitHits(hits, counts, options.maxTokens ?? Number.POSITIVE_INFINITY);
}

function hitOf(c: RankedNote, terms: readonly string[]): RecallHit {
  const note: RecallNote = c.index.note(c.d).note;
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
