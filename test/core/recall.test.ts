import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { sealEngram } from "../../src/core/model/engram.js";
import { estimateTokens } from "../../src/core/recall/fit.js";
import { noteOfCommit } from "../../src/core/recall/notes.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  recall,
  recallTerms,
  serializeRecallIndex,
  tokenize,
} from "../../src/core/recall/recall.js";
import { stem } from "../../src/core/recall/terms.js";
import type { Engram, EngramBody } from "../../src/schema/engram.js";
import { counted } from "../../src/worker/note-tokens.js";
import { memoryNotes } from "../../src/worker/recall.js";
import { engramBody } from "./engine-fixtures.js";

const engram = (fields: Partial<EngramBody>): Engram => sealEngram(engramBody(fields));
const indexOf = (...engrams: Engram[]) => buildRecallIndex(memoryNotes(engrams));
const texts = (hits: { text: string }[]) => hits.map((h) => h.text);

describe("recall terms", () => {
  it("tokenize lowercases, splits on non-alphanumerics, drops stop words and one-character tokens", () => {
    expect(tokenize("The Auth-Service of a CI_pipeline: v2, x!")).toEqual([
      "auth",
      "service",
      "ci",
      "pipeline",
      "v2",
    ]);
    expect(tokenize("Zürich straße 東京 ＡＰＩ")).toEqual(["zürich", "straße", "東京", "api"]);
  });

  it("meet across plurals, -ing, -ed and a final y, and leave derivations apart", () => {
    const same = [
      ["webhook", "webhooks"],
      ["retry", "retries", "retried", "retrying"],
      ["cache", "caches", "cached", "caching"],
      ["policy", "policies"],
      ["run", "running"],
      ["deploy", "deploys", "deployed", "deploying"],
    ];
    for (const group of same) {
      expect(new Set(group.map(stem)), group.join(" ")).toHaveLength(1);
    }
    expect(stem("authentication")).not.toBe(stem("author"));
    expect(stem("status")).toBe("status");
    expect(stem("v2")).toBe("v2");
  });

  it("leave out the words a question is made of", () => {
    expect(recallTerms("Why did we switch to Redis, and what should I know?")).toEqual([
      "switch",
      "redis",
      "know",
    ]);
    expect(recallTerms("what did she say about it")).toEqual(["say"]);
  });
});

describe("recall: a hit is a note", () => {
  const both = engram({
    topics: ["payments"],
    facts: ["Lesson: The payment API returns 429 under load; retry with jitter"],
    decisions: [{ title: "Store money as integer cents", rationale: "floats lose precision" }],
    provenance: {
      created_by: "t",
      run_id: "r",
      event_count: 2,
      senders: ["agent-a", "agent-b"],
      message_types: {},
    },
  });

  it("ranks a lesson and a decision of one engram apart, each whole, with where and who", () => {
    const index = indexOf(both);
    const [lesson] = recall(index, "retry with jitter");
    expect(lesson).toMatchObject({
      id: `${both.engram_id}#f0`,
      kind: "lesson",
      text: "The payment API returns 429 under load; retry with jitter",
      scope: "st",
      engram_id: both.engram_id,
      at: "2025-01-01T00:00:00.000Z",
      senders: ["agent-a", "agent-b"],
      matched: ["retri", "jitter"],
    });
    expect(lesson).not.toHaveProperty("rationale");
    const [decision] = recall(index, "why integer cents?");
    expect(decision).toMatchObject({
      kind: "decision",
      text: "Store money as integer cents",
      rationale: "floats lose precision",
    });
  });

  it("keeps a lesson recallable when an LT engram promoted only the decision beside it", () => {
    const lt = engram({
      scope: "lt",
      version: "20250102-000000Z",
      topics: ["payments"],
      decisions: [{ title: "Store money as integer cents", rationale: "floats lose precision" }],
      supersedes: [both.engram_id],
    });
    const index = indexOf(both, lt);
    const lesson = recall(index, "retry with jitter");
    expect(texts(lesson)).toEqual(["The payment API returns 429 under load; retry with jitter"]);
    const decision = recall(index, "integer cents");
    expect(decision.map((h) => [h.scope, h.engram_id])).toEqual([["lt", lt.engram_id]]);
    const all = recall(index, "integer cents", { includeSuperseded: true });
    expect(all).toHaveLength(2);
    expect(all.find((h) => h.scope === "st")?.superseded_by).toEqual([lt.engram_id]);
  });

  it("gives a claim said in several engrams once, and episodes as notes of their own", () => {
    const a = engram({ facts: ["Use pnpm for installs"] });
    const b = engram({ version: "20250103-000000Z", facts: ["use  pnpm for installs"] });
    expect(recall(indexOf(a, b), "pnpm")).toHaveLength(1);
    const withEpisode = engram({
      episodes: [
        {
          id: "ep_000000000000000000000001",
          at: "2025-01-01T10:00:00.000Z",
          kind: "lesson",
          sender: "agent-c",
          outcome: "failure",
          confidence: 0.9,
          surprise: 0.9,
          privacy: "public",
          text: "The migration locked the orders table for ten minutes",
        },
      ],
    });
    const [hit] = recall(indexOf(withEpisode), "orders table locked");
    expect(hit).toMatchObject({ kind: "episode", senders: ["agent-c"] });
    expect(hit?.text).toContain("locked the orders table");
  });

  it("never indexes sealed text", () => {
    const sealed = engram({
      privacy: "sensitive",
      facts: ["a public fact"],
      sealed: [{ alg: "A256GCM", iv: "aXY=", ct: "Q0lQSEVS", tag: "dGFn", field: "text" }],
    });
    const index = indexOf(sealed);
    expect(JSON.stringify(serializeRecallIndex(index))).not.toContain("Q0lQSEVS");
  });
});

describe("recall: ranking", () => {
  it("weighs rare terms over common ones, so a common word does not choose the note", () => {
    const notes = Array.from({ length: 30 }, (_, i) =>
      engram({
        version: `202501${String(i + 1).padStart(2, "0")}-000000Z`,
        facts: [`alice did task ${i}`],
      }),
    );
    const answer = engram({ facts: ["The flaky deploy job needs a retry budget"] });
    const hits = recall(
      indexOf(...notes, answer),
      "what did alice say about the flaky deploy job?",
    );
    expect(hits[0]?.text).toBe("The flaky deploy job needs a retry budget");
  });

  it("finds plurals and inflections", () => {
    const index = indexOf(engram({ facts: ["Webhooks are retried three times"] }));
    expect(recall(index, "webhook retry")).toHaveLength(1);
    expect(recall(index, "retrying the webhook")).toHaveLength(1);
  });

  it("adds topic matches and a proximity bonus to text matches, not in place of them", () => {
    const topicOnly = engram({ topics: ["deploy"], facts: ["Nothing here matches"] });
    const near = engram({ facts: ["The deploy cache is rebuilt nightly"] });
    const far = engram({ facts: ["The deploy step runs after the job that warms the cache"] });
    const hits = recall(indexOf(topicOnly, near, far), "deploy cache");
    expect(texts(hits)).toEqual([
      "The deploy cache is rebuilt nightly",
      "The deploy step runs after the job that warms the cache",
      "Nothing here matches",
    ]);
  });

  it("ranks query terms side by side above the same words apart", () => {
    // The same words, so the same text score; the newer note would win the tie without the bonus.
    const near = engram({
      version: "20250101-000000Z",
      facts: ["the deploy cache holds nightly artifacts"],
    });
    const far = engram({
      version: "20250301-000000Z",
      facts: ["the cache holds nightly deploy artifacts"],
    });
    expect(texts(recall(indexOf(far, near), "deploy cache"))).toEqual([
      "the deploy cache holds nightly artifacts",
      "the cache holds nightly deploy artifacts",
    ]);
  });

  it("breaks a tie by recency, then by tier, then by id", () => {
    const older = engram({ version: "20250101-000000Z", facts: ["redis holds sessions"] });
    const newer = engram({ version: "20250301-000000Z", facts: ["redis holds the queue"] });
    expect(texts(recall(indexOf(older, newer), "redis"))[0]).toBe("redis holds the queue");
    const st = engram({ facts: ["the build uses esbuild"] });
    const lt = engram({ scope: "lt", facts: ["esbuild bundles the bins"] });
    expect(recall(indexOf(st, lt), "esbuild")[0]?.scope).toBe("lt");
  });

  it("ranks memory and history as one collection, and filters by scope", () => {
    const memory = buildRecallIndex(
      memoryNotes([engram({ facts: ["Node 20 is the minimum runtime"] })]),
    );
    const history = buildRecallIndex([
      noteOfCommit({
        sha: "a".repeat(40),
        at: "2024-05-01T00:00:00.000Z",
        author: "Ada",
        subject: "Drop Node 18 support",
        body: "Node 18 reaches end of life; the engines field now says >=20.",
      }),
      noteOfCommit({
        sha: "b".repeat(40),
        at: "2024-05-02T00:00:00.000Z",
        author: "Bob",
        subject: "Merge pull request #7 from bob/docs",
        body: "Document the cache folder\n\nMore text.",
      }),
    ]);
    const hits = recall([memory, history], "minimum node version");
    expect(hits.map((h) => h.scope)).toEqual(["st", "history"]);
    expect(hits[1]).toMatchObject({ kind: "commit", commit: "a".repeat(40), senders: ["Ada"] });
    expect(recall([memory, history], "node", { scopes: ["history"] })).toHaveLength(1);
    const merge = recall([memory, history], "document cache folder")[0];
    expect(merge?.text).toBe("Document the cache folder (Merge pull request #7 from bob/docs)");
  });

  it("returns nothing for empty, blank or question-word queries and honours the limit", () => {
    const index = indexOf(
      ...Array.from({ length: 15 }, (_, i) => engram({ facts: [`queue fact ${i}`] })),
    );
    expect(recall(index, "")).toEqual([]);
    expect(recall(index, "   ")).toEqual([]);
    expect(recall(index, "what is the")).toEqual([]);
    expect(recall(index, "queue")).toHaveLength(10);
    expect(recall(index, "queue", { limit: 3 })).toHaveLength(3);
  });
});

describe("recall: the token budget", () => {
  const long = "The release job signs every artifact with the project key before upload. ".repeat(
    30,
  );
  const index = indexOf(
    engram({ facts: [long.trim()] }),
    ...Array.from({ length: 6 }, (_, i) =>
      engram({ facts: [`The release job ${i} runs on tags only, never on branches`] }),
    ),
  );

  it("fills hits in rank order within the budget, cutting only where it must", () => {
    for (const budget of [64, 128, 512]) {
      const hits = recall(index, "release job artifact", { maxTokens: budget, limit: 5 });
      const total = hits.reduce((n, h) => n + h.tokens, 0);
      expect(total).toBeLessThanOrEqual(budget);
      expect(hits.length).toBeGreaterThan(1);
      for (const h of hits) {
        expect(h.tokens).toBe(
          estimateTokens(h.text) + (h.rationale ? estimateTokens(h.rationale) : 0),
        );
        if (h.truncated) expect(h.text.endsWith("…")).toBe(true);
      }
    }
    const whole = recall(index, "release job artifact", { limit: 1 });
    expect(whole[0]?.text).toBe(long.trim());
    expect(whole[0]?.truncated).toBeUndefined();
  });

  it("counts whole notes with the real tokenizer, and a cut one at or above it", () => {
    const notes = counted(
      memoryNotes([
        engram({ facts: [long.trim(), "Mollis euismod: the vendored lorem ipsum module"] }),
      ]),
    );
    const real = buildRecallIndex(notes);
    const [whole] = recall(real, "lorem ipsum module");
    expect(whole?.tokens).toBe(countTokens("Mollis euismod: the vendored lorem ipsum module"));
    for (const budget of [16, 40, 100]) {
      const [cut] = recall(real, "release artifact signs", { maxTokens: budget });
      expect(cut?.truncated).toBe(true);
      expect(cut?.tokens).toBeLessThanOrEqual(budget);
      expect(cut?.tokens).toBeGreaterThanOrEqual(countTokens(cut?.text ?? ""));
    }
    const prose = "The payment API returns 429 under load; retry with jitter and a budget.";
    expect(estimateTokens(prose)).toBeGreaterThanOrEqual(countTokens(prose));
  });
});

describe("recall: the serialized index", () => {
  it("gives the same hits after a JSON round trip, and refuses anything else", () => {
    const index = indexOf(
      engram({ topics: ["ci"], facts: ["Lesson: cache npm in CI"] }),
      engram({ decisions: [{ title: "Pin node", rationale: "reproducible builds" }] }),
    );
    const copy = deserializeRecallIndex(JSON.parse(JSON.stringify(serializeRecallIndex(index))));
    expect(copy).toBeDefined();
    for (const q of ["cache npm", "pin node", "ci builds"]) {
      expect(recall(copy!, q)).toEqual(recall(index, q));
    }
    expect(deserializeRecallIndex({ format: "engram-recall-index/v2" })).toBeUndefined();
    // A cache whose postings name notes it does not hold is rebuilt, not trusted.
    const damaged = serializeRecallIndex(index);
    const [term, df, , weights, topics] = damaged.terms[0]!;
    const far = Buffer.from(Int32Array.from([99]).buffer).toString("base64");
    damaged.terms[0] = [term, df, far, weights, topics];
    expect(deserializeRecallIndex(JSON.parse(JSON.stringify(damaged)))).toBeUndefined();
    expect(deserializeRecallIndex(null)).toBeUndefined();
  });
});

describe("recall: properties", () => {
  const words = ["auth", "service", "deploy", "cache", "flaky", "tests", "queue", "retry", "the"];
  const phrase = fc
    .array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 })
    .map((w) => w.join(" "));
  const engramArb = fc.record({
    day: fc.integer({ min: 1, max: 28 }),
    scope: fc.constantFrom("st" as const, "lt" as const),
    topics: fc.array(phrase, { maxLength: 2 }),
    facts: fc.array(phrase, { maxLength: 3 }),
  });

  it("is deterministic, scores descend, matched terms are query terms", () => {
    fc.assert(
      fc.property(fc.array(engramArb, { maxLength: 12 }), phrase, (specs, query) => {
        const engrams = specs.map((s) =>
          engram({
            version: `202501${String(s.day).padStart(2, "0")}-000000Z`,
            scope: s.scope,
            topics: s.topics,
            facts: s.facts,
          }),
        );
        const hits = recall(indexOf(...engrams), query);
        const again = recall(indexOf(...[...engrams].reverse()), query);
        expect(again).toEqual(hits);
        const terms = new Set(recallTerms(query));
        for (let i = 0; i < hits.length; i++) {
          const h = hits[i]!;
          for (const m of h.matched) expect(terms.has(m)).toBe(true);
          if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1]!.score);
        }
      }),
    );
  });
});
