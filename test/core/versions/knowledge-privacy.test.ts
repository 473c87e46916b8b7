/**
 * A session's knowledge record carries the privacy its item stated (`worker session write
 * --privacy`), through consolidation, the knowledge file and every reader, sync included. The
 * file comes from the repository, so it is hostile input: its privacy speaks for that record
 * only, an unknown value is refused, and a restatement never makes a record less private.
 */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../../src/core/compaction/compact.js";
import { learningId } from "../../../src/core/graph/learnings.js";
import { emptyCatalog, sealEngram } from "../../../src/core/model/engram.js";
import { learningCandidates, learningStates } from "../../../src/core/sync/learning-items.js";
import { DEFAULT_THRESHOLDS } from "../../../src/core/sync/policy.js";
import { type SourceOptions, syncCandidates } from "../../../src/core/sync/sources.js";
import { consolidateSessions, type SessionInput } from "../../../src/core/versions/consolidate.js";
import { knowledgeId, knowledgeKey } from "../../../src/core/versions/consolidate-values.js";
import {
  documentEntry,
  documentText,
  knowledgeFile,
  knowledgePath,
  loadMaster,
} from "../../../src/core/versions/documents.js";
import type { SessionItem } from "../../../src/core/versions/items.js";
import {
  type KnowledgeItem,
  knowledgeItems,
  knowledgeLearning,
} from "../../../src/core/versions/knowledge-view.js";
import { emptyMaster, type KnowledgeRecord } from "../../../src/core/versions/master.js";
import type { Privacy } from "../../../src/schema/common.js";
import type { Catalog } from "../../../src/schema/engram.js";
import { engramBody, memoryEvent } from "../engine-fixtures.js";

const AT = "2026-01-01T00:00:00.000Z";

function session(n: number, list: { text: string; privacy?: string }[]): SessionInput {
  const items: SessionItem[] = list.map((x, i) => ({
    kind: "decision",
    text: x.text,
    confidence: 0.9,
    ...(x.privacy !== undefined ? { privacy: x.privacy } : {}),
    seq: i + 1,
    written_at: AT,
    redactions: 0,
  }));
  return { session_id: `s_000000000000000${n}`, parent_version: 1, items };
}

const privacyOf = (records: readonly KnowledgeRecord[], text: string) =>
  records.find((r) => r.text === text)?.privacy;

/** A catalog listing one knowledge file, and the file's text. */
function knowledgeMemory(records: unknown[]): { catalog: Catalog; texts: Map<string, string> } {
  const path = knowledgePath("decision");
  const text = documentText({ kind: "decision", records });
  const catalog = { ...emptyCatalog(), documents: [documentEntry(path, "knowledge", text)] };
  return { catalog, texts: new Map([[path, text]]) };
}

const record = (text: string, privacy?: Privacy) => ({
  id: knowledgeId(knowledgeKey(text, undefined)),
  text,
  ...(privacy !== undefined ? { privacy } : {}),
  confidence: 0.9,
  evidence: 1,
  version: 2,
});

const OPTIONS: SourceOptions = {
  thresholds: {
    ...DEFAULT_THRESHOLDS,
    insight_validated_min_evidence: 1,
    insight_pending_min_evidence: 1,
  },
  default_privacy: "private",
  default_confidence: 0.9,
  project: "demo",
};

const item = (text: string, privacy: Privacy, fields: Partial<KnowledgeItem> = {}) =>
  ({
    path: knowledgePath("decision"),
    kind: "decision",
    id: knowledgeId(knowledgeKey(text, undefined)),
    text,
    rationale: null,
    confidence: 0.9,
    evidence: 1,
    privacy,
    version: 2,
    written_at: AT,
    ...fields,
  }) satisfies KnowledgeItem;

describe("knowledge records' privacy", () => {
  it("is carried from the item to the record and the file; absent stays absent (private)", () => {
    const { master } = consolidateSessions(emptyMaster(1), [
      session(1, [
        { text: "Ship weekly", privacy: "public" },
        { text: "Keep the key offline" },
        { text: "Ship on Tuesdays", privacy: "private" },
      ]),
    ]);
    expect(privacyOf(master.knowledge, "Ship weekly")).toBe("public");
    expect(privacyOf(master.knowledge, "Keep the key offline")).toBeUndefined();
    expect(privacyOf(master.knowledge, "Ship on Tuesdays")).toBeUndefined();
    const file = knowledgeFile("decision", master.knowledge);
    expect(file.records.map((r) => "privacy" in r)).toEqual([true, false, false]);
    // Fixed key order: privacy between the content and the counts.
    expect(Object.keys(file.records[0] as object)).toEqual([
      "id",
      "text",
      "privacy",
      "confidence",
      "evidence",
      "version",
    ]);
  });

  it("takes the strictest privacy when a session restates a record: never less private", () => {
    const { master } = consolidateSessions(emptyMaster(1), [
      session(1, [{ text: "Ship weekly", privacy: "public" }, { text: "Pin node" }]),
      session(2, [{ text: "ship  WEEKLY" }, { text: "pin node", privacy: "public" }]),
    ]);
    expect(privacyOf(master.knowledge, "Ship weekly")).toBeUndefined();
    expect(privacyOf(master.knowledge, "Pin node")).toBeUndefined();
    expect(master.knowledge.map((r) => r.evidence)).toEqual([2, 2]);
  });

  it("refuses a knowledge file whose record names a privacy no reader knows", () => {
    const { catalog, texts } = knowledgeMemory([{ ...record("Ship weekly"), privacy: "everyone" }]);
    expect(() => loadMaster(1, catalog.documents ?? [], texts)).toThrow(
      /memory\/knowledge\/decision\.json: records\[0\]\.privacy: expected public \| private \| sensitive/,
    );
    // Readers leave the file out rather than read its text as shareable.
    expect(knowledgeItems(catalog, texts, new Map())).toEqual([]);
  });

  it("reads as private where the record says nothing, as it says where it does", () => {
    const { catalog, texts } = knowledgeMemory([
      record("Ship weekly", "public"),
      record("Keep the key offline"),
    ]);
    const items = knowledgeItems(catalog, texts, new Map());
    expect(items.map((k) => [k.text, k.privacy])).toEqual([
      ["Ship weekly", "public"],
      ["Keep the key offline", "private"],
    ]);
  });
});

describe("sync candidates of the sessions' knowledge", () => {
  it("are insights named by their k_ id, long-term (validated), with their own privacy", () => {
    const knowledge = [
      item("Ship weekly", "public", { rationale: "small diffs", evidence: 2 }),
      item("Keep the key offline", "private"),
    ];
    const candidates = syncCandidates([], emptyCatalog(), { ...OPTIONS, knowledge });
    const insights = candidates.filter((c) => c.item.type === "insight");
    expect(insights.map((c) => [c.item.local_id, c.item.privacy])).toEqual(
      [
        [knowledgeId(knowledgeKey("Keep the key offline", undefined)), "private"],
        [knowledgeId(knowledgeKey("Ship weekly", undefined)), "public"],
      ].sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
    );
    const weekly = insights.find((c) => c.item.content.startsWith("Ship weekly"));
    expect(weekly?.item.fields).toMatchObject({
      type: "decision",
      status: "validated",
      evidence_count: 2,
      confidence: 0.9,
      shareable: true,
    });
    expect(weekly?.item.content).toBe("Ship weekly\n\nWhy: small diffs");
    expect(weekly?.verdict.sync).toBe(true);
    // The id comes from the text: a record naming another's id does not take its sync key.
    const forged = item("Something else", "public", { id: weekly?.item.local_id ?? "" });
    const both = syncCandidates([], emptyCatalog(), { ...OPTIONS, knowledge: [forged] });
    expect(both.map((c) => c.item.local_id)).not.toContain(weekly?.item.local_id);
  });

  it("join an engram stating the same claim: one insight, the strictest privacy of both", () => {
    const engram = sealEngram(
      engramBody({
        privacy: "private",
        facts: ["Lesson: warm the cache first"],
        decisions: [{ title: "Ship weekly", rationale: "" }],
      }),
    );
    const knowledge = [
      item("Ship weekly", "public"),
      item("warm the cache first", "public", { kind: "lesson" }),
    ];
    const candidates = syncCandidates([engram], emptyCatalog(), { ...OPTIONS, knowledge });
    const insights = candidates.filter((c) => c.item.type === "insight");
    expect(insights).toHaveLength(2);
    for (const c of insights) {
      expect(c.item.local_id).toMatch(/^in_/);
      expect(c.item.privacy).toBe("private");
      expect(c.item.fields.evidence_count).toBe(2);
    }
  });

  it("makes an engram's decision an insight of kind decision, as its facts are", () => {
    const engrams = compactSlice(
      [
        memoryEvent(1, {
          kind: "decision",
          text: "Adopt zod",
          rationale: "one validator",
          privacy: "public",
          topics: ["t"],
        }),
      ],
      { engram_max_bytes: 16_384, stall_seconds: 600, promote_min_confidence: 0.7, max_groups: 8 },
    );
    const insight = syncCandidates(engrams, emptyCatalog(), OPTIONS).find(
      (c) => c.item.type === "insight",
    );
    expect(insight?.item).toMatchObject({
      privacy: "public",
      content: "Adopt zod\n\nWhy: one validator",
      fields: { type: "decision", status: "pending" },
    });
  });

  it("give the learning graph (Tana) the record's privacy, never more open than an engram's", () => {
    const matcher = { link: (l: never) => l, linkDocument: () => ({ entities: [], unlinked: [] }) };
    const pub = knowledgeLearning(item("Ship weekly", "public"), matcher as never);
    const priv = knowledgeLearning(item("Keep the key offline", "private"), matcher as never);
    const options = { default_privacy: "public" as const, default_confidence: 0.5, project: "p" };
    const items = learningCandidates(learningStates([pub, priv]), new Map(), options);
    expect(items.map((c) => [c.item.local_id, c.item.privacy])).toEqual(
      [
        [learningId("Ship weekly"), "public"],
        [learningId("Keep the key offline"), "private"],
      ].sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
    );
    // The record's own confidence, as Notion's insight shows it, not the default; its file
    // and tier as an engram's are shown.
    expect(items.map((c) => c.item.fields.confidence)).toEqual([0.9, 0.9]);
    expect(items[0]?.item.fields.source).toBe(
      "knowledge memory/knowledge/decision.json (lt, 1 statement(s))",
    );
    const engram = sealEngram(engramBody({ privacy: "private" }));
    const stated = { ...pub, engrams: [engram.engram_id] };
    const joined = learningCandidates(
      learningStates([stated]),
      new Map([[engram.engram_id, engram]]),
      options,
    );
    expect(joined[0]?.item.privacy).toBe("private");
  });
});
