import { tokenize } from "../recall/recall.js";
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
  const wanted = new Set(tokenize(options.topic));
  const pool = learnings.filter((l) => !options.type || l.type === options.type);
  const scored = new Map<string, ContextItem>();
  for (const l of pool) {
    const words = new Set(tokenize(`${l.text} ${l.rationale ?? ""} ${l.topics.join(" ")}`));
    let hits = 0;
    for (const w of wanted) if (words.has(w)) hits++;
    const entityHit = l.entities.some((e) => wanted.has(e.slice(e.indexOf(":") + 1).toLowerCase()));
    if (hits === 0 && !entityHit) continue;
    const score =
      (hits + (entityHit ? 1 : 0)) / Math.max(1, wanted.size) + Math.log2(1 + l.evidence) / 10;
    scored.set(l.id, item(l, score, "match", []));
  }
  const matchedEntities = new Map<EntityId, number>();
  for (const l of pool) {
    const m = scored.get(l.id);
    if (!m) continue;
    for (const e of l.entities)
      matchedEntities.set(e, Math.max(matchedEntities.get(e) ?? 0, m.score));
  }
  // An entity that much of memory links to (a hub file, a big project) says little about
  // relatedness: a neighbour's weight falls with how many learnings share the entity.
  const degree = new Map<EntityId, number>();
  for (const l of pool) {
    for (const e of l.entities) if (matchedEntities.has(e)) degree.set(e, (degree.get(e) ?? 0) + 1);
  }
  for (const l of pool) {
    if (scored.has(l.id)) continue;
    const shared = l.entities.filter((e) => matchedEntities.has(e) && !e.startsWith("url:"));
    if (shared.length === 0) continue;
    let best = 0;
    for (const e of shared) {
      const weight = (matchedEntities.get(e) ?? 0) / Math.log2(1 + (degree.get(e) ?? 1));
      if (weight > best) best = weight;
    }
    const score = best * NEIGHBOUR_WEIGHT * Math.min(1, shared.length / 2 + 0.5);
    scored.set(l.id, item(l, score, "neighbour", shared));
  }
  const ranked = [...scored.values()].sort(
    (a, b) => b.score - a.score || b.evidence - a.evidence || a.id.localeCompare(b.id),
  );
  const header = `## Memory: ${options.topic}\n\n_${options.scopeLine}_\n\n`;
  const headerTokens = options.countTokens(header);
  if (headerTokens > options.maxTokens)
    return { items: [], omitted: ranked.length, tokens: 0, markdown: "" };
  // Lines are counted one by one (a line ends in a newline, so counts add up almost exactly);
  // the whole text is counted at the end and trimmed until the real count fits.
  const chosen: ContextItem[] = [];
  let estimate = headerTokens;
  let misses = 0;
  for (const candidate of ranked) {
    // Ranked best first: once the budget is nearly full, or many candidates in a row no
    // longer fit, the rest would not either (and counting them costs more than it saves).
    if (options.maxTokens - estimate < MIN_LINE_TOKENS || misses >= MAX_MISSES) break;
    const cost = options.countTokens(render(candidate));
    if (estimate + cost > options.maxTokens) {
      misses++;
      continue;
    }
    misses = 0;
    estimate += cost;
    chosen.push(candidate);
  }
  const compose = () =>
    header +
    (chosen.length === 0
      ? "_Nothing related to this topic in memory._\n"
      : chosen.map(render).join(""));
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
  return { items: chosen, omitted: ranked.length - chosen.length, tokens, markdown };
}

function item(
  l: LinkedLearning,
  score: number,
  via: ContextItem["via"],
  shared: EntityId[],
): ContextItem {
  return {
    id: l.id,
    type: l.type,
    text: l.text,
    rationale: l.rationale,
    score: Math.round(score * 1000) / 1000,
    via,
    shared,
    engram_id: l.engrams[0] as string,
    evidence: l.evidence,
  };
}

function render(i: ContextItem): string {
  const why = i.rationale ? ` (because ${i.rationale})` : "";
  const via = i.via === "neighbour" ? ` [related through ${i.shared.slice(0, 3).join(", ")}]` : "";
  return `- **${i.type}**: ${i.text}${why}${via}\n`;
}
