import { describe, expect, it } from "vitest";
import type { LinkedLearning } from "../../src/core/graph/entities.js";
import type { LearningEntry } from "../../src/core/graph/lifecycle.js";
import { itemHash } from "../../src/core/sync/item.js";
import { learningStates, placedStates } from "../../src/core/sync/learning-items.js";
import { outgoingPublic } from "../../src/core/sync/outgoing.js";
import {
  bodyChars,
  fitNode,
  nodeCount,
  parseDescription,
  planCalls,
  renderNode,
  splitForJson,
  type TanaSchemaIds,
} from "../../src/core/sync/tana-nodes.js";

const FIELDS = {
  type: "fType00001",
  content: "fContent01",
  confidence: "fConf00001",
  source: "fSource001",
  confirmedAt: "fConfAt001",
  seedEntryId: "fSeed00001",
  relatedPeople: "fPeople001",
  relatedProjects: "fProj00001",
  status: "fStatus001",
  extractedFrom: "fFrom00001",
  decidedAt: "fDecided01",
  archivedAt: "fArch00001",
};
const IDS: TanaSchemaIds = {
  tags: { learning: "tLearn0001", proposal: "tProp00001" },
  fields: { learning: FIELDS, proposal: FIELDS },
};
const LIMITS = { max_nodes: 100, max_chars: 5000 };

function item(i: number, content = `Lesson number ${i}: retry the flaky step twice`) {
  const sync = {
    type: "learning" as const,
    local_id: `l_${String(i).padStart(16, "0")}`,
    title: content.slice(0, 120),
    privacy: "public" as const,
    occurred_at: "2026-01-05T10:00:00.000Z",
    fields: {
      type: "insight",
      confidence: 0.87,
      source: "engram e_1 (lt, 1 engram(s))",
      confirmed_at: "2026-01-05T10:00:00.000Z",
    },
    content,
  };
  return outgoingPublic(sync, itemHash(sync));
}

describe("Tana nodes (pure)", () => {
  it("renders a learning with its supertag, key and fields on the seed's scale", () => {
    const out = item(1);
    const node = renderNode(out, IDS, { people: ["person0001"], projects: [] });
    expect(node.supertags).toEqual([{ id: "tLearn0001" }]);
    expect(parseDescription(node.description)).toEqual({ key: out.key, hash: out.content_hash });
    const fields = Object.fromEntries(
      (node.children ?? []).map((c) => ["attributeId" in c ? c.attributeId : "", c.children]),
    );
    expect(fields.fConf00001).toEqual([{ name: "8.7" }]);
    expect(fields.fSeed00001).toEqual([{ name: out.local_id }]);
    expect(fields.fPeople001).toEqual([{ dataType: "reference", id: "person0001" }]);
    expect(fields.fConfAt001).toEqual([{ dataType: "date", name: "2026-01-05T10:00:00.000Z" }]);
    expect(fields.fProj00001).toBeUndefined();
  });

  it("groups nodes into calls within 100 nodes and 5000 characters, in order", () => {
    const planned = Array.from({ length: 150 }, (_, i) => {
      const out = item(i);
      return fitNode(
        out.key,
        renderNode(out, IDS, { people: [], projects: [] }),
        FIELDS.content,
        "INBOX",
        LIMITS,
      );
    });
    const calls = planCalls(planned, "INBOX", LIMITS);
    expect(calls.flat().map((p) => p.key)).toEqual(planned.map((p) => p.key));
    for (const call of calls) {
      const body = { targetNodeId: "INBOX", nodes: call.map((p) => p.node) };
      expect(bodyChars(body)).toBeLessThanOrEqual(5000);
      expect(nodeCount(body.nodes)).toBeLessThanOrEqual(100);
    }
    // Packed: a call leaves no room for the next node.
    for (const [i, call] of calls.slice(0, -1).entries()) {
      const next = calls[i + 1]?.[0];
      const body = { targetNodeId: "INBOX", nodes: [...call, next].map((p) => p?.node) };
      const over = bodyChars(body as never) > 5000 || nodeCount(body.nodes as never) > 100;
      expect(over).toBe(true);
    }
  });

  it("the node limit binds when nodes are small", () => {
    const planned = Array.from({ length: 60 }, (_, i) => ({
      key: `learning:l_${i}`,
      node: { name: `n${i}`, children: [{ name: "a" }, { name: "b" }] },
      overflow: [],
    }));
    const calls = planCalls(planned, "INBOX", LIMITS);
    expect(calls.map((c) => nodeCount(c.map((p) => p.node)))).toEqual([99, 81]);
  });

  it("splits content over the limit into parts that join back to it", () => {
    const text = `${'é "quoted" line\n'.repeat(800)}end`;
    const out = item(7, text);
    const planned = fitNode(
      out.key,
      renderNode(out, IDS, { people: [], projects: [] }),
      FIELDS.content,
      "INBOX",
      LIMITS,
    );
    expect(bodyChars({ targetNodeId: "INBOX", nodes: [planned.node] })).toBeLessThanOrEqual(5000);
    const head = (planned.node.children ?? []).find(
      (c) => "attributeId" in c && c.attributeId === FIELDS.content,
    );
    const first = (head?.children?.[0] as { name?: string } | undefined)?.name ?? "";
    expect(first + planned.overflow.join("")).toBe(text);
    expect(splitForJson("abc", 4)).toEqual(["ab", "c"]);
  });

  it("a learning on main is confirmed, whatever a proposal still says about it", () => {
    const l = { id: "l_1" } as LinkedLearning;
    const p = { id: "l_2" } as LinkedLearning;
    const states = learningStates(
      [l],
      [
        { learning: l, status: "pending", decided_at: null, extracted_from: "pr 1" },
        { learning: p, status: "pending", decided_at: null, extracted_from: "pr 2" },
      ],
    );
    expect(states.confirmed.map((x) => x.id)).toEqual(["l_1"]);
    expect(states.proposals.map((x) => x.learning.id)).toEqual(["l_2"]);
  });

  it("places states as the seed's node kinds: pending, rejected, and accepted once confirmed", () => {
    const entry = (id: string, status: LearningEntry["status"], at: Partial<LearningEntry>) => ({
      learning: { id } as LinkedLearning,
      entry: {
        id,
        status,
        confirmed_at: null,
        decided_at: null,
        where: "work tree",
        pr: null,
        ...at,
      } as LearningEntry,
    });
    const placed = [
      entry("l_1", "confirmed", { confirmed_at: "2026-04-01T12:00:00Z", where: "main", pr: 3 }),
      entry("l_2", "confirmed", { confirmed_at: "2026-04-02T12:00:00Z", where: "main" }),
      entry("l_3", "proposed", { where: "open pull request", pr: 5 }),
      entry("l_4", "rejected", {
        decided_at: "2026-04-03T12:00:00Z",
        where: "closed pull request",
        pr: 4,
      }),
    ];
    const states = placedStates(placed, new Set(["l_1"]));
    expect(states.confirmed.map((l) => l.id)).toEqual(["l_1", "l_2"]);
    expect(states.confirmed_at).toEqual({
      l_1: "2026-04-01T12:00:00Z",
      l_2: "2026-04-02T12:00:00Z",
    });
    expect(
      states.proposals.map((p) => [p.learning.id, p.status, p.decided_at, p.extracted_from]),
    ).toEqual([
      // Its proposal node exists: it is kept and says the proposal was accepted.
      ["l_1", "accepted", "2026-04-01T12:00:00Z", "pull request #3"],
      ["l_3", "pending", null, "open pull request #5"],
      ["l_4", "rejected", "2026-04-03T12:00:00Z", "closed pull request #4"],
    ]);
  });
});
