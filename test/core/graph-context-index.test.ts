import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ContextItem, type ContextOptions, contextFor } from "../../src/core/graph/context.js";
import { buildContextIndex, ContextIndexReader } from "../../src/core/graph/context-index.js";
import { learningNote } from "../../src/core/graph/context-rank.js";
import type { LinkedLearning } from "../../src/core/graph/entities.js";
import { type LearningType, learningId } from "../../src/core/graph/learnings.js";
import { buildRecallIndex, recall } from "../../src/core/recall/recall.js";

/**
 * The ranking without the context index: the matches as `recall` ranks the learnings (one
 * note each), every learning's neighbours scored by scanning them all. The indexed ranking
 * must give the same answer, byte for byte.
 */
function referenceContext(
  learnings: readonly LinkedLearning[],
  options: Pick<ContextOptions, "topic" | "type">,
) {
  // What relates a learning: its entities less those every learning of its engram carries
  // (when the engram states several), over all learnings, whatever the type asked.
  const groups = new Map<string, LinkedLearning[]>();
  for (const l of learnings)
    groups.set(l.engrams[0] as string, [...(groups.get(l.engrams[0] as string) ?? []), l]);
  const own = new Map<string, string[]>();
  for (const l of learnings) {
    const group = groups.get(l.engrams[0] as string) as LinkedLearning[];
    const common =
      group.length < 2 ? [] : l.entities.filter((e) => group.every((g) => g.entities.includes(e)));
    own.set(
      l.id,
      l.entities.filter((e) => !common.includes(e)),
    );
  }
  const ownOf = (l: LinkedLearning) => own.get(l.id) as string[];
  const pool = learnings.filter((l) => !options.type || l.type === options.type);
  const scored = new Map<string, ContextItem>();
  const item = (l: LinkedLearning, score: number, via: ContextItem["via"], shared: string[]) => ({
    id: l.id,
    type: l.type,
    text: l.text,
    rationale: l.rationale,
    score: Math.round(score * 1000) / 1000,
    via,
    shared,
    engram_id: l.engrams[0] as string,
    evidence: l.evidence,
  });
  // Matches: recall's own ranking over one note per learning, every match kept.
  const hits = recall(buildRecallIndex(learnings.map(learningNote)), options.topic, {
    limit: 10_000,
  });
  const byId = new Map(learnings.map((l) => [l.id, l]));
  const matches: ContextItem[] = [];
  for (const hit of hits) {
    const l = byId.get(hit.id) as LinkedLearning;
    if (options.type && l.type !== options.type) continue;
    const m = item(l, hit.score, "match", []);
    scored.set(l.id, m);
    matches.push(m);
  }
  const matched = new Map<string, number>();
  for (const l of pool) {
    const m = scored.get(l.id);
    if (m) for (const e of ownOf(l)) matched.set(e, Math.max(matched.get(e) ?? 0, m.score));
  }
  const degree = new Map<string, number>();
  for (const l of pool)
    for (const e of ownOf(l)) if (matched.has(e)) degree.set(e, (degree.get(e) ?? 0) + 1);
  for (const l of pool) {
    if (scored.has(l.id)) continue;
    const shared = ownOf(l).filter((e) => matched.has(e) && !e.startsWith("url:"));
    if (shared.length === 0) continue;
    let best = 0;
    for (const e of shared) {
      const weight = (matched.get(e) ?? 0) / Math.log2(1 + (degree.get(e) ?? 1));
      if (weight > best) best = weight;
    }
    scored.set(
      l.id,
      item(l, best * 0.5 * Math.min(1, shared.length / 2 + 0.5), "neighbour", shared),
    );
  }
  const neighbours = [...scored.values()]
    .filter((i) => i.via === "neighbour")
    .sort((a, b) => b.score - a.score || b.evidence - a.evidence || a.id.localeCompare(b.id));
  // Matches in recall's order; a neighbour goes before a match only on a higher score.
  return [...matches, ...neighbours].sort((a, b) => b.score - a.score);
}

const WORDS = ["planner", "cache", "retry", "ada", "engine", "payment", "queue", "router", "the"];
const ENTITIES = [
  "file:src/a.ts",
  "file:src/b.ts",
  "person:ada",
  "project:engine",
  "issue:12",
  "url:https://example.com/a",
  "commit:1a2b3c4d5e6f",
];
const TYPES: LearningType[] = ["decision", "insight", "pattern", "convention", "self_knowledge"];

const learningArb = fc
  .record({
    words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }),
    // Few engrams: learnings share them, and with them their engram's links.
    n: fc.nat({ max: 6 }),
    type: fc.constantFrom(...TYPES),
    rationale: fc.option(fc.constantFrom(...WORDS)),
    topics: fc.array(fc.constantFrom(...WORDS), { maxLength: 2 }),
    entities: fc.uniqueArray(fc.constantFrom(...ENTITIES), { maxLength: 3 }),
    evidence: fc.integer({ min: 1, max: 4 }),
  })
  .map(
    (r): LinkedLearning => ({
      id: learningId(`${r.words.join(" ")} ${r.n}`),
      type: r.type,
      text: `${r.words.join(" ")} ${r.n}`,
      rationale: r.rationale,
      engrams: [`e_${r.n}`],
      scope: "st",
      evidence: r.evidence,
      written_at: "2026-01-01T00:00:00Z",
      topics: r.topics,
      links: [],
      senders: [],
      entities: [...r.entities].sort(),
      unlinked: [],
    }),
  );

const countTokens = (t: string) => t.split(/\s+/).filter(Boolean).length;

/** The index as plain data: every array and every record's bytes. */
function plain(index: ReturnType<typeof buildContextIndex>) {
  const r = index.recall;
  const last = (offsets: Uint32Array) => offsets[offsets.length - 1] as number;
  const end = index.records.offsets[index.count] as number;
  return {
    ...index,
    recall: {
      ...r,
      textDocs: [...r.textDocs(0, last(r.textOffsets))],
      textWeights: [...r.textWeights(0, last(r.textOffsets))],
      topicDocs: [...r.topicDocs(0, last(r.topicOffsets))],
      phraseDocs: [...r.phraseDocs(0, last(r.phraseOffsets))],
    },
    records: [...index.records.offsets, ...index.records.read(0, end)],
  };
}

describe("context index", () => {
  it("ranks matches as recall does and neighbours as scanning every learning, for any memory, topic and type", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(learningArb, { maxLength: 40, selector: (l) => l.id }),
        fc.array(fc.constantFrom(...WORDS, "src/a.ts", "ada", "12"), { maxLength: 3 }),
        fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
        fc.integer({ min: 1, max: 400 }),
        (learnings, topicWords, type, maxTokens) => {
          const topic = topicWords.join(" ");
          const expected = referenceContext(learnings, { topic, type });
          const all = contextFor(learnings, {
            topic,
            type,
            maxTokens: 1_000_000,
            countTokens,
            scopeLine: "s",
          });
          expect(all.items).toEqual(expected);
          // Within a budget: the best of the same ranking, in order.
          const r = contextFor(learnings, { topic, type, maxTokens, countTokens, scopeLine: "s" });
          expect(r.items.length + r.omitted).toBe(expected.length);
          const order = expected.map((i) => i.id);
          const at = r.items.map((i) => order.indexOf(i.id));
          expect(at).toEqual([...at].sort((a, b) => a - b));
          expect(at.every((k) => k >= 0)).toBe(true);
        },
      ),
    );
  });

  it("is the same bytes for the same learnings, in any order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(learningArb, { maxLength: 20, selector: (l) => l.id }),
        (learnings) => {
          const a = buildContextIndex(learnings);
          expect(plain(buildContextIndex([...learnings].reverse()))).toEqual(plain(a));
          const reader = new ContextIndexReader(a);
          for (let i = 0; i < reader.count; i++) {
            const record = reader.record(i);
            const l = learnings.find((x) => x.id === record.id) as LinkedLearning;
            expect(record).toEqual({
              id: l.id,
              type: l.type,
              text: l.text,
              rationale: l.rationale,
              engram_id: l.engrams[0],
              evidence: l.evidence,
            });
          }
        },
      ),
    );
  });
});

describe("context relatedness", () => {
  const learning = (text: string, engram: string, entities: string[]): LinkedLearning => ({
    id: learningId(text),
    type: "decision",
    text,
    rationale: null,
    engrams: [engram],
    scope: "lt",
    evidence: 1,
    written_at: "2026-01-01T00:00:00Z",
    topics: [],
    links: [],
    senders: [],
    entities,
    unlinked: [],
  });
  const commits = ["commit:1a2b3c4d5e6f", "commit:2b3c4d5e6f7a"];
  // A history import: one engram states every decision and carries every commit as a link.
  const imported = [
    learning("Use biome for lint and format", "e_history", [...commits]),
    learning("Switch the tests to vitest", "e_history", [...commits]),
    learning("Drop support for Node 18", "e_history", [...commits, "file:package.json"]),
  ];
  const ask = (learnings: LinkedLearning[], topic: string) =>
    contextFor(learnings, { topic, maxTokens: 10_000, countTokens, scopeLine: "s" }).items;

  it("does not relate learnings through a link their whole engram shares", () => {
    expect(ask(imported, "biome lint").map((i) => i.text)).toEqual([
      "Use biome for lint and format",
    ]);
  });

  it("relates learnings through a link of their own, and finds shared links by name", () => {
    const lesson = learning("Revert the cache change", "e_later", [commits[0] as string]);
    const fix = learning("Fix the cache key", "e_fix", [commits[0] as string]);
    const items = ask([...imported, lesson, fix], "revert");
    // The fix's engram links it alone to the commit: a neighbour; the imported decisions are not.
    expect(items.map((i) => [i.text, i.via])).toEqual([
      ["Revert the cache change", "match"],
      ["Fix the cache key", "neighbour"],
    ]);
    // Naming the commit matches every learning linked to it, shared link or not.
    expect(ask([...imported, lesson, fix], "1a2b3c4d5e6f").length).toBe(5);
  });
});
