import { RERANK_DEPTH, rankNotes } from "../recall/rank.js";
import { buildContextIndex, ContextIndexReader, LEARNING_TYPES } from "./context-index.js";
import type { EntityId, LinkedLearning } from "./entities.js";
import type { LearningType } from "./learnings.js";

export interface ContextOptions {
  topic: string;
  maxTokens: number;
  type?: LearningType | undefined;
  /** Counts tokens as the model's tokenizer does (the adapter passes a real tokenizer). */
  countTokens: (text: string) => number;
  /** A line naming the scope, rendered at the top of the markdown. */
  scopeLine: string;
}

export interface ContextItem {
  id: string;
  type: LearningType;
  text: string;
  rationale: string | null;
  score: number;
  /** `match` (the topic's words) or `neighbour` (shares entities with a match). */
  via: "match" | "neighbour";
  shared: EntityId[];
  engram_id: string;
  evidence: number;
}

export interface ContextResult {
  items: ContextItem[];
  /** Related learnings left out to stay within the budget. */
  omitted: number;
  tokens: number;
  markdown: string;
}

const NEIGHBOUR_WEIGHT = 0.5;
const NOTHING = "_Nothing related to this topic in memory._\n";
const MIN_LINE_TOKENS = 6;
const MAX_MISSES = 32;

/**
 * The learnings related to a topic, ranked and fitted to a token budget: those whose words
 * match the topic, then their neighbours (learnings linked to the same files, projects and
 * people), each once, rendered as markdown ready to paste into a prompt.
 */
export function contextFor(
  learnings: readonly LinkedLearning[],
  options: ContextOptions,
): ContextResult {
  return contextFromIndex(new ContextIndexReader(buildContextIndex(learnings)), options);
}

/** As `contextFor`, over a prebuilt index: the postings of the topic's words, not every text. */
export function contextFromIndex(
  index: ContextIndexReader,
  options: ContextOptions,
): ContextResult {
  const ranked = rank(index, options);
  const header = headerOf(options.topic, options.scopeLine);
  const headerTokens = options.countTokens(header);
  if (headerTokens > options.maxTokens)
    return { items: [], omitted: ranked.order.length, tokens: 0, markdown: "" };
  // Lines are counted one by one (a line ends in a newline, so counts add up almost exactly);
  // the whole text is counted at the end and trimmed until the real count fits.
  const chosen: ContextItem[] = [];
  let estimate = headerTokens;
  let misses = 0;
  for (const i of ranked.order) {
    // Ranked best first: once the budget is nearly full, or many candidates in a row no
    // longer fit, the rest would not either (and counting them costs more than it saves).
    if (options.maxTokens - estimate < MIN_LINE_TOKENS || misses >= MAX_MISSES) break;
    const candidate = ranked.item(i);
    const cost = options.countTokens(render(candidate));
    if (estimate + cost > options.maxTokens) {
      misses++;
      continue;
    }
    misses = 0;
    estimate += cost;
    chosen.push(candidate);
  }
  const compose = () => header + (chosen.length === 0 ? NOTHING : chosen.map(render).join(""));
  let markdown = compose();
  let tokens = options.countTokens(markdown);
  while (tokens > options.maxTokens && chosen.length > 0) {
    chosen.pop();
    markdown = compose();
    tokens = options.countTokens(markdown);
  }
  if (tokens > options.maxTokens) {
    markdown = header;
    tokens = headerTokens;
  }
  return { items: chosen, omitted: ranked.order.length - chosen.length, tokens, markdown };
}

interface Ranked {
  /** The related learnings (indices), best first. */
  order: ArrayLike<number> & Iterable<number>;
  /** The item of a related learning, its record read only now. */
  item(i: number): ContextItem;
}

/** How many of the best matches are re-scored for proximity: as many as a default recall. */
const RERANK = 10 + RERANK_DEPTH;

/**
 * Every related learning of the pool, best first: the learnings matching the topic, in the
 * order and with the scores memory's one ranking gives them (`rankNotes`, as `worker recall`
 * ranks), then their neighbours, each scored by the best match it shares an entity with,
 * discounted by how common that entity is, merged in by score (a match first on a tie).
 * State lives in arrays over all learnings: at 40,000 learnings most of memory can be a
 * neighbour.
 */
function rank(index: ContextIndexReader, options: ContextOptions): Ranked {
  const n = index.count;
  const types = index.index.types;
  const typeCode = options.type === undefined ? -1 : LEARNING_TYPES.indexOf(options.type);
  const { offsets: entOff, refs: entRefs } = index.index.learningEntities;
  const { offsets: linkOff, refs: linkRefs } = index.index.entityLearnings;
  const evidence = index.index.evidence;
  const urls = index.urlFlags();
  const { source: notes, positions } = index.recall();
  const keep =
    typeCode < 0
      ? undefined
      : (_: unknown, d: number) => types[positions[d] as number] === typeCode;
  const { ranked } = rankNotes([notes], options.topic, {
    rerank: RERANK,
    ...(keep ? { keep } : {}),
  });
  // 0: unrelated, 1: match, 2: neighbour.
  const state = new Uint8Array(n);
  // Scores in thousandths, as they are reported: ranking and output use the same figure.
  const milli = new Float64Array(n);
  const matches = new Uint32Array(ranked.length);
  const entities = index.index.entities.length;
  const entityMatched = new Uint8Array(entities);
  const entityScore = new Float64Array(entities);
  const matchedEntities: number[] = [];
  ranked.forEach((c, r) => {
    const i = positions[c.d] as number;
    matches[r] = i;
    state[i] = 1;
    const m = Math.round(c.score * 1000);
    milli[i] = m;
    const s = m / 1000;
    for (let k = entOff[i] as number; k < (entOff[i + 1] as number); k++) {
      const e = entRefs[k] as number;
      if (entityMatched[e] === 0) {
        entityMatched[e] = 1;
        matchedEntities.push(e);
      }
      if (s > (entityScore[e] as number)) entityScore[e] = s;
    }
  });
  // An entity that much of memory links to (a hub file, a big project) says little about
  // relatedness: a neighbour's weight falls with how many learnings share the entity.
  const weight = new Float64Array(entities);
  const neighbours = new Uint32Array(n);
  let count = 0;
  for (const e of matchedEntities) {
    const from = linkOff[e] as number;
    const to = linkOff[e + 1] as number;
    let degree = to - from;
    if (typeCode >= 0) {
      degree = 0;
      for (let k = from; k < to; k++) if (types[linkRefs[k] as number] === typeCode) degree++;
    }
    weight[e] = (entityScore[e] as number) / Math.log2(1 + (degree || 1));
    if (urls[e] === 1) continue;
    for (let k = from; k < to; k++) {
      const i = linkRefs[k] as number;
      if (state[i] === 0 && (typeCode < 0 || types[i] === typeCode)) {
        state[i] = 2;
        neighbours[count++] = i;
      }
    }
  }
  const sharedOf = (i: number): number[] => {
    const shared: number[] = [];
    for (let k = entOff[i] as number; k < (entOff[i + 1] as number); k++) {
      const e = entRefs[k] as number;
      if (entityMatched[e] === 1 && urls[e] === 0) shared.push(e);
    }
    return shared;
  };
  for (let r = 0; r < count; r++) {
    const i = neighbours[r] as number;
    let best = 0;
    let shared = 0;
    for (let k = entOff[i] as number; k < (entOff[i + 1] as number); k++) {
      const e = entRefs[k] as number;
      if (entityMatched[e] === 0 || urls[e] === 1) continue;
      shared++;
      if ((weight[e] as number) > best) best = weight[e] as number;
    }
    milli[i] = Math.round(best * NEIGHBOUR_WEIGHT * Math.min(1, shared / 2 + 0.5) * 1000);
  }
  const others = byRank(neighbours.subarray(0, count), milli, evidence);
  return {
    order: merged(matches, others, milli),
    item: (i) => {
      const r = index.record(i);
      const neighbour = state[i] === 2;
      return {
        id: r.id,
        type: r.type,
        text: r.text,
        rationale: r.rationale,
        score: (milli[i] as number) / 1000,
        via: neighbour ? "neighbour" : "match",
        shared: neighbour ? sharedOf(i).map((e) => index.entityName(e)) : [],
        engram_id: r.engram_id,
        evidence: r.evidence,
      };
    },
  };
}

/** Two lists each best first, as one by score (thousandths); on a tie, `first`'s item. */
function merged(first: Uint32Array, second: Uint32Array, milli: Float64Array): Uint32Array {
  const out = new Uint32Array(first.length + second.length);
  let a = 0;
  let b = 0;
  for (let k = 0; k < out.length; k++) {
    const x = first[a];
    const y = second[b];
    const takeFirst =
      y === undefined || (x !== undefined && (milli[x] as number) >= (milli[y] as number));
    out[k] = (takeFirst ? x : y) as number;
    if (takeFirst) a++;
    else b++;
  }
  return out;
}

/**
 * Score (thousandths) descending, then evidence descending, then index (id order)
 * ascending. Packed into one number per learning when that is exact, so the engine's
 * native numeric sort does the work; a comparator sort otherwise.
 */
function byRank(related: Uint32Array, milli: Float64Array, evidence: Uint32Array): Uint32Array {
  let maxScore = 0;
  let maxEvidence = 0;
  for (let k = 0; k < related.length; k++) {
    const i = related[k] as number;
    if ((milli[i] as number) > maxScore) maxScore = milli[i] as number;
    if ((evidence[i] as number) > maxEvidence) maxEvidence = evidence[i] as number;
  }
  const span = milli.length;
  if ((maxScore + 1) * (maxEvidence + 1) * span > Number.MAX_SAFE_INTEGER) {
    return related.sort(
      (a, b) =>
        (milli[b] as number) - (milli[a] as number) ||
        (evidence[b] as number) - (evidence[a] as number) ||
        a - b,
    );
  }
  const keys = new Float64Array(related.length);
  for (let k = 0; k < related.length; k++) {
    const i = related[k] as number;
    const s = maxScore - (milli[i] as number);
    const e = maxEvidence - (evidence[i] as number);
    keys[k] = (s * (maxEvidence + 1) + e) * span + i;
  }
  keys.sort();
  const order = new Uint32Array(keys.length);
  for (let k = 0; k < keys.length; k++) order[k] = (keys[k] as number) % span;
  return order;
}

function headerOf(topic: string, scopeLine: string): string {
  return `## Memory: ${topic}\n\n_${scopeLine}_\n\n`;
}

function related(shared: readonly string[]): string {
  return ` [related through ${shared.slice(0, 3).join(", ")}]`;
}

function render(i: ContextItem): string {
  const why = i.rationale ? ` (because ${i.rationale})` : "";
  const via = i.via === "neighbour" ? related(i.shared) : "";
  return `- **${i.type}**: ${i.text}${why}${via}\n`;
}

/**
 * The texts an answer over `index` is made of, but for its topic: the frame, every
 * learning's line, every entity as "related through" names it (twice, so that the pieces
 * where two names meet are there too). Their pieces' token counts are what the index
 * remembers (`context-tokens.ts`).
 */
export function* answerTexts(index: ContextIndexReader, scopeLine: string): Iterable<string> {
  // A topic's own words come from the learnings; a word stands in for it here.
  yield headerOf("topic", scopeLine);
  yield NOTHING;
  for (let i = 0; i < index.count; i++) {
    const r = index.record(i);
    yield render({ ...r, score: 0, via: "match", shared: [] });
  }
  for (let e = 0; e < index.index.entities.length; e++) {
    if (index.isUrl(e)) continue;
    const name = index.entityName(e);
    yield `${related([name, name])}\n`;
  }
}
