import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { engramPath, sealEngram } from "../../src/core/model/engram.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallDoc,
  recall,
  recallDocFromEngram,
  serializeRecallIndex,
  tokenize,
} from "../../src/core/recall/recall.js";
import { engramBody } from "./engine-fixtures.js";

let counter = 0;
function doc(spec: Partial<RecallDoc> & { id?: number }): RecallDoc {
  const n = spec.id ?? ++counter + 1000;
  const engram_id = `e_${n.toString(16).padStart(32, "0")}`;
  const scope = spec.scope ?? "st";
  const version = spec.version ?? "20250101-000000Z";
  return {
    engram_id,
    path: engramPath(scope, version, engram_id),
    scope,
    version,
    topics: spec.topics ?? [],
    facts: spec.facts ?? [],
    decisions: spec.decisions ?? [],
  };
}

const ids = (hits: { engram_id: string }[]) => hits.map((h) => h.engram_id);

describe("tokenize", () => {
  it("lowercases, splits on non-alphanumerics, drops stop words and one-character tokens", () => {
    expect(tokenize("The Auth-Service of a CI_pipeline: v2, x!")).toEqual([
      "auth",
      "service",
      "ci",
      "pipeline",
      "v2",
    ]);
    expect(tokenize("Zürich straße 東京 ＡＰＩ")).toEqual(["zürich", "straße", "東京", "api"]);
    expect(tokenize("   ")).toEqual([]);
  });
});

describe("recall: the hit", () => {
  it("carries a decision's rationale when the snippet is that decision, none for a fact", () => {
    const decided = doc({
      id: 7001,
      facts: ["the cache lives in memory"],
      decisions: [{ title: "Pin the cache size", rationale: "  evictions  hurt\nthe p99 " }],
    });
    const fact = doc({ id: 7002, facts: ["the cache size is 64 MiB"] });
    const index = buildRecallIndex([decided, fact]);
    const hits = recall(index, "pin cache size");
    expect(hits[0]).toMatchObject({
      engram_id: decided.engram_id,
      snippet: "Pin the cache size",
      rationale: "evictions hurt the p99",
    });
    const factHit = hits.find((h) => h.engram_id === fact.engram_id);
    expect(factHit?.snippet).toBe("the cache size is 64 MiB");
    expect(factHit).not.toHaveProperty("rationale");
    // Through the serialized index (the recall cache) too.
    const copy = deserializeRecallIndex(JSON.parse(JSON.stringify(serializeRecallIndex(index))));
    expect(copy).toBeDefined();
    const again = recall(copy!, "pin cache size");
    expect(again[0]?.rationale).toBe("evictions hurt the p99");
    // Long rationales are cut like snippets.
    const long = doc({ id: 7003, decisions: [{ title: "Pin it", rationale: "why ".repeat(200) }] });
    const cut = recall(buildRecallIndex([long]), "pin")[0]?.rationale ?? "";
    expect(cut.length).toBeLessThanOrEqual(301);
  });
});

describe("recall: ranking", () => {
  it("ranks by text match: more and rarer query terms first", () => {
    const both = doc({ id: 1, facts: ["the flaky deploy job needs a retry"] });
    const one = doc({ id: 2, facts: ["the deploy job is slow"] });
    const none = doc({ id: 3, facts: ["unrelated words only"] });
    const index = buildRecallIndex([none, one, both]);
    const hits = recall(index, "flaky deploy");
    expect(ids(hits)).toEqual([both.engram_id, one.engram_id]);
    expect(hits[0]?.matched).toEqual(["flaky", "deploy"]);
    expect(hits[1]?.matched).toEqual(["deploy"]);
    expect(hits[0]?.snippet).toBe("the flaky deploy job needs a retry");
  });

  it("weights topic matches above text and exact topics highest", () => {
    const exact = doc({ id: 3, topics: ["auth"], facts: ["login flow"] });
    const token = doc({ id: 2, topics: ["auth-service"], facts: ["tokens expire"] });
    const text = doc({ id: 1, facts: ["auth auth auth is mentioned in the text"] });
    const filler = Array.from({ length: 20 }, (_, i) =>
      doc({ id: 100 + i, facts: [`filler ${i}`] }),
    );
    const index = buildRecallIndex([text, token, exact, ...filler]);
    expect(ids(recall(index, "auth"))).toEqual([exact.engram_id, token.engram_id, text.engram_id]);
  });

  it("matches hyphenated topics from `auth service` and `auth-service`", () => {
    const topic = doc({ id: 1, topics: ["auth-service"] });
    const partial = doc({ id: 2, topics: ["auth"], facts: ["the service restarts"] });
    const index = buildRecallIndex([partial, topic]);
    for (const q of ["auth service", "auth-service", "AUTH_SERVICE"]) {
      const hits = recall(index, q);
      expect(hits[0]?.engram_id).toBe(topic.engram_id);
      expect(hits[0]?.matched).toEqual(["auth", "service"]);
      expect(hits[0]?.topics).toEqual(["auth-service"]);
    }
  });

  it("prefers newer engrams, relative to the newest in the index", () => {
    const old = doc({ id: 1, version: "20240101-000000Z", facts: ["cache invalidation bug"] });
    const recent = doc({ id: 2, version: "20250101-000000Z", facts: ["cache invalidation bug"] });
    const hits = recall(buildRecallIndex([old, recent]), "cache bug");
    expect(ids(hits)).toEqual([recent.engram_id, old.engram_id]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score as number);
  });

  it("boosts long-term engrams", () => {
    const st = doc({ id: 1, scope: "st", facts: ["migrations run before deploy"] });
    const lt = doc({ id: 2, scope: "lt", facts: ["migrations run before deploy"] });
    expect(ids(recall(buildRecallIndex([st, lt]), "migrations"))).toEqual([
      lt.engram_id,
      st.engram_id,
    ]);
  });

  it("breaks ties by engram_id, whatever the input order", () => {
    const docs = [5, 3, 9, 1, 7].map((id) => doc({ id, facts: ["identical fact about queues"] }));
    const expected = [...docs.map((d) => d.engram_id)].sort();
    expect(ids(recall(buildRecallIndex(docs), "queues"))).toEqual(expected);
    expect(ids(recall(buildRecallIndex([...docs].reverse()), "queues"))).toEqual(expected);
    const scores = recall(buildRecallIndex(docs), "queues").map((h) => h.score);
    expect(new Set(scores).size).toBe(1);
  });

  it("filters by scope and honours the limit (10 by default)", () => {
    const docs = Array.from({ length: 30 }, (_, i) =>
      doc({ id: i + 1, scope: i % 3 === 0 ? "lt" : "st", facts: [`shared topic words ${i}`] }),
    );
    const index = buildRecallIndex(docs);
    expect(index.size).toBe(30);
    expect(recall(index, "shared").length).toBe(10);
    expect(recall(index, "shared", { limit: 3 }).length).toBe(3);
    expect(recall(index, "shared", { limit: 0 })).toEqual([]);
    const lt = recall(index, "shared", { scope: "lt", limit: 100 });
    expect(lt.length).toBe(10);
    expect(lt.every((h) => h.scope === "lt")).toBe(true);
    expect(
      recall(index, "shared", { scope: "st", limit: 100 }).every((h) => h.scope === "st"),
    ).toBe(true);
  });

  it("returns nothing for empty, blank or stop-word queries", () => {
    const index = buildRecallIndex([doc({ facts: ["the and of"], topics: ["x"] })]);
    expect(recall(index, "")).toEqual([]);
    expect(recall(index, "   \n\t")).toEqual([]);
    expect(recall(index, "the and of")).toEqual([]);
    expect(recall(index, "-- !!")).toEqual([]);
    expect(recall(buildRecallIndex([]), "anything")).toEqual([]);
  });

  it("picks the best-matching fact or decision title as snippet, cut to ~200 chars", () => {
    const d = doc({
      facts: ["nothing here", `release ${"notes ".repeat(80)}`],
      decisions: [{ title: "Freeze releases on Friday", rationale: "weekend pager load" }],
    });
    const index = buildRecallIndex([d]);
    expect(recall(index, "friday pager")[0]?.snippet).toBe("Freeze releases on Friday");
    const long = recall(index, "notes")[0]?.snippet ?? "";
    expect(Array.from(long).length).toBeLessThanOrEqual(200);
    expect(long.endsWith("…")).toBe(true);
    const topicOnly = buildRecallIndex([doc({ topics: ["billing"], facts: ["first fact"] })]);
    expect(recall(topicOnly, "billing")[0]?.snippet).toBe("first fact");
  });

  it("keeps one document per engram_id, the newest version", () => {
    const a = doc({ id: 1, version: "20250101-000000Z", facts: ["alpha"] });
    const b = { ...a, version: "20250201-000000Z", facts: ["beta"] };
    for (const order of [
      [a, b],
      [b, a],
    ]) {
      const index = buildRecallIndex(order);
      expect(index.size).toBe(1);
      expect(recall(index, "alpha")).toEqual([]);
      expect(recall(index, "beta")[0]?.version).toBe("20250201-000000Z");
    }
  });

  it("rejects an index it did not build", () => {
    expect(() => recall({ size: 0 }, "x y")).toThrow(TypeError);
  });
});

describe("recallDocFromEngram", () => {
  it("takes plain fields and the engram path, never sealed text", () => {
    const engram = sealEngram(
      engramBody({
        scope: "lt",
        topics: ["ci"],
        facts: ["a fact"],
        decisions: [{ title: "t", rationale: "r" }],
        privacy: "sensitive",
        sealed: [{ alg: "A256GCM", iv: "aXY=", ct: "Q0lQSEVS", tag: "dGFn", field: "text" }],
      }),
    );
    const d = recallDocFromEngram(engram);
    expect(d).toEqual({
      engram_id: engram.engram_id,
      path: engramPath("lt", "20250101-000000Z", engram.engram_id),
      scope: "lt",
      version: "20250101-000000Z",
      topics: ["ci"],
      facts: ["a fact"],
      decisions: [{ title: "t", rationale: "r" }],
    });
    expect(JSON.stringify(d)).not.toContain("Q0lQSEVS");
  });
});

const words = [
  "auth",
  "service",
  "deploy",
  "cache",
  "flaky",
  "test",
  "db",
  "queue",
  "retry",
  "the",
  "ci",
  "zürich",
];
const phraseArb = fc
  .tuple(
    fc.array(fc.oneof(fc.constantFrom(...words), fc.string({ maxLength: 6 })), { maxLength: 8 }),
    fc.constantFrom(" ", "-", "_", ", "),
  )
  .map(([ws, sep]) => ws.join(sep));
const docArb = fc.record({
  id: fc.integer({ min: 1, max: 60 }),
  scope: fc.constantFrom("st" as const, "lt" as const),
  version: fc.constantFrom(
    "20240101-000000Z",
    "20250101-120000Z",
    "20250301-000000Z",
    "not-a-version",
  ),
  topics: fc.array(phraseArb, { maxLength: 4 }),
  facts: fc.array(phraseArb, { maxLength: 4 }),
  decisions: fc.array(fc.record({ title: phraseArb, rationale: phraseArb }), { maxLength: 2 }),
});
const docsArb = fc.array(docArb, { maxLength: 25 }).map((specs) => {
  const byId = new Map(specs.map((s) => [s.id, doc(s)]));
  return [...byId.values()];
});

describe("recall: properties", () => {
  it("matched terms are query tokens, scores descend with id tie-break, hits are exactly the docs sharing a token", () => {
    fc.assert(
      fc.property(
        docsArb,
        phraseArb,
        fc.option(fc.constantFrom("st" as const, "lt" as const), { nil: undefined }),
        (docs, query, scope) => {
          const index = buildRecallIndex(docs);
          const q = new Set(tokenize(query));
          const hits = recall(index, query, { limit: 1000, scope });
          for (const h of hits) {
            expect(h.matched.length).toBeGreaterThan(0);
            for (const m of h.matched) expect(q.has(m)).toBe(true);
            expect(h.score).toBeGreaterThan(0);
            if (scope) expect(h.scope).toBe(scope);
          }
          for (let i = 1; i < hits.length; i++) {
            const a = hits[i - 1]!;
            const b = hits[i]!;
            expect(a.score > b.score || (a.score === b.score && a.engram_id < b.engram_id)).toBe(
              true,
            );
          }
          const expected = docs
            .filter((d) => !scope || d.scope === scope)
            .filter((d) => {
              const text = [
                ...d.topics,
                ...d.facts,
                ...d.decisions.flatMap((x) => [x.title, x.rationale]),
              ];
              return text.some((t) => tokenize(t).some((tok) => q.has(tok)));
            })
            .map((d) => d.engram_id)
            .sort();
          expect(ids(hits).sort()).toEqual(expected);
          const limited = recall(index, query, { limit: 3, scope });
          expect(limited).toEqual(hits.slice(0, 3));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is deterministic: input order does not change results", () => {
    fc.assert(
      fc.property(docsArb, phraseArb, (docs, query) => {
        const a = recall(buildRecallIndex(docs), query, { limit: 50 });
        const b = recall(buildRecallIndex([...docs].reverse()), query, { limit: 50 });
        expect(b).toEqual(a);
      }),
      { numRuns: 100 },
    );
  });
});

describe("recall: the serialized index", () => {
  it("gives the same hits after a JSON round trip, and refuses anything else", () => {
    fc.assert(
      fc.property(docsArb, phraseArb, (docs, query) => {
        const index = buildRecallIndex(docs);
        const copy = deserializeRecallIndex(
          JSON.parse(JSON.stringify(serializeRecallIndex(index))),
        );
        expect(copy).toBeDefined();
        expect(recall(copy!, query, { limit: 1000 })).toEqual(
          recall(index, query, { limit: 1000 }),
        );
      }),
    );
    expect(deserializeRecallIndex({ catalog_hash: "x", docs: [] })).toBeUndefined();
    expect(deserializeRecallIndex(null)).toBeUndefined();
  });
});
