import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileGlob } from "../../src/core/glob.js";
import { contextFor } from "../../src/core/graph/context.js";
import { entityMatcher, type LinkedLearning } from "../../src/core/graph/entities.js";
import { freshnessOf, freshnessOfAll, isoSeconds } from "../../src/core/graph/freshness.js";
import { type Learning, learningId, learningsOf } from "../../src/core/graph/learnings.js";
import type { Engram } from "../../src/schema/engram.js";
import { Registry } from "../../src/schema/registry.js";
import { engramBody } from "./engine-fixtures.js";

const registry = Registry.parse({
  people: [{ id: "ada", name: "Ada Lovelace", aliases: ["ada"], emails: ["ada@example.com"] }],
  projects: [{ id: "engine", name: "Engine", paths: ["src/engine/**"] }],
  components: [{ id: "parser", name: "Parser", paths: ["src/*/parse.ts"] }],
});

function learning(text: string, extra: Partial<Learning> = {}): Learning {
  return {
    id: learningId(text),
    type: "insight",
    text,
    rationale: null,
    engrams: ["e_0"],
    scope: "st",
    evidence: 1,
    written_at: "2026-01-01T00:00:00Z",
    topics: [],
    links: [],
    senders: [],
    ...extra,
  };
}

function engram(id: string, version: string, facts: string[], extra: Partial<Engram> = {}): Engram {
  return { engram_id: id, hash: "sha256:0", ...engramBody({ version, facts, ...extra }) };
}

describe("entity linking", () => {
  const matcher = entityMatcher(registry);

  it("links issues, PRs, commits, paths, URLs, people and the areas covering a path", () => {
    const l = matcher.link(
      learning(
        "Ada fixed #12 in PR #7 (commit 1a2b3c4d) by editing src/engine/plan.ts and src/core/parse.ts, see https://example.com/x.",
      ),
    );
    expect(l.entities).toEqual([
      "commit:1a2b3c4d",
      "component:parser",
      "file:src/core/parse.ts",
      "file:src/engine/plan.ts",
      "issue:12",
      "person:ada",
      "pr:7",
      "project:engine",
      "url:https://example.com/x",
    ]);
  });

  it("never invents an entity for an unknown mention", () => {
    const l = matcher.link(
      learning("@grace said the build is fine; @ada agreed; 1234567 is a number"),
    );
    expect(l.entities).toEqual(["person:ada"]);
    expect(l.unlinked).toEqual(["@grace"]);
  });

  it("reads a learning's links and senders", () => {
    const l = matcher.link(
      learning("x", {
        links: [
          { type: "file", ref: "src/engine/a.ts" },
          { type: "issue", ref: "#3" },
        ],
        senders: ["ada"],
      }),
    );
    expect(l.entities).toEqual(["file:src/engine/a.ts", "issue:3", "person:ada", "project:engine"]);
  });

  it("compiles globs: ** crosses folders, * does not", () => {
    expect(compileGlob("src/**/x.ts").test("src/x.ts")).toBe(true);
    expect(compileGlob("src/**/x.ts").test("src/a/b/x.ts")).toBe(true);
    expect(compileGlob("src/*.ts").test("src/a/b.ts")).toBe(false);
    expect(compileGlob("a.b").test("axb")).toBe(false);
  });
});

describe("learnings", () => {
  it("counts the engrams that state a claim once each, whatever the case and spacing", () => {
    const out = learningsOf([
      engram("e_1", "20260101-000000Z", ["Lesson: Run  tests in forks"]),
      engram("e_2", "20260201-000000Z", ["lesson: run tests in forks", "Convention: tabs"], {
        scope: "lt",
      }),
    ]);
    const forks = out.find((l) => l.text.toLowerCase().includes("forks"));
    expect(forks?.evidence).toBe(2);
    expect(forks?.scope).toBe("lt");
    expect(out.find((l) => l.text === "tabs")?.type).toBe("convention");
  });

  it("leaves tentative facts (telemetry, questions) out", () => {
    const out = learningsOf([
      engram("e_1", "20260101-000000Z", ["Worker w: stages code over 5m", "Firm"], {
        tentative: ["Worker w: stages code over 5m"],
      }),
    ]);
    expect(out.map((l) => l.text)).toEqual(["Firm"]);
  });
});

describe("freshness", () => {
  const day = 86_400;
  const now = 1_800_000_000;
  it("is the newer of confirmation and graph activity, against the threshold", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (c, a) => {
        const l = { ...learning("x"), entities: ["file:a"], unlinked: [] };
        const f = freshnessOf(
          l,
          { at: now - c * day, by: "merge" },
          () => ({ at: now - a * day, detail: "commit" }),
          { now, thresholdDays: 30 },
        );
        expect(f.fresh).toBe(Math.min(c, a) <= 30);
        expect(f.temporal_fresh).toBe(c <= 30);
      }),
    );
  });
});

describe("context", () => {
  it("never exceeds the token budget, whatever it is", () => {
    const pool = Array.from({ length: 30 }, (_, i) => ({
      ...learning(`planner fact number ${i} with some words`),
      entities: [`file:f${i % 3}`],
      unlinked: [],
    }));
    const countTokens = (t: string) => t.split(/\s+/).filter(Boolean).length;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), (max) => {
        const r = contextFor(pool, {
          topic: "planner",
          maxTokens: max,
          countTokens,
          scopeLine: "s",
        });
        expect(r.tokens).toBeLessThanOrEqual(max);
        expect(countTokens(r.markdown)).toBe(r.tokens);
        expect(new Set(r.items.map((i) => i.id)).size).toBe(r.items.length);
      }),
    );
  });

  it("weighs the topic's words as recall does: a rare word counts more than a common one", () => {
    const linked = (l: Learning): LinkedLearning => ({ ...l, entities: [], unlinked: [] });
    // "payments" is in most of memory, "jitter" in one learning: the word that says more wins.
    const common = ["invoices", "refunds", "ledgers", "webhooks"].map((w) =>
      linked(learning(`The payments service owns the ${w}`)),
    );
    const rare = linked(learning("Retries back off with jitter"));
    const r = contextFor([...common, rare], {
      topic: "payments jitter",
      maxTokens: 400,
      countTokens: (t) => t.split(/\s+/).filter(Boolean).length,
      scopeLine: "s",
    });
    expect(r.items[0]?.text).toBe("Retries back off with jitter");
    expect(r.items).toHaveLength(5);
  });
});

// From 1900 to beyond 9999, where ISO-8601 takes the six-digit year.
const seconds = fc.integer({ min: -2_208_988_800, max: 260_000_000_000 });

describe("freshness of all learnings", () => {
  it("formats times as Date does, to the second", () => {
    fc.assert(
      fc.property(seconds, (s) => {
        expect(isoSeconds(s)).toBe(new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"));
      }),
    );
  });

  it("gives each learning what freshnessOf gives it alone", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(seconds, fc.option(seconds, { nil: undefined })), { maxLength: 30 }),
        seconds,
        fc.integer({ min: 1, max: 400 }),
        (rows, now, thresholdDays) => {
          const learnings: LinkedLearning[] = rows.map((_, i) => ({
            ...learning(`fact ${i}`),
            entities: [`file:f${i}`],
            unlinked: [],
          }));
          const confirmedOf = (l: LinkedLearning) => ({
            at: (rows[learnings.indexOf(l)] as [number, number | undefined])[0],
            by: "merge" as const,
          });
          const activityOf = (entity: string) => {
            const at = (rows[Number(entity.slice(6))] as [number, number | undefined])[1];
            return at === undefined ? undefined : { at, detail: "commit" };
          };
          const options = { now, thresholdDays };
          expect(freshnessOfAll(learnings, confirmedOf, activityOf, options)).toEqual(
            learnings.map((l) => freshnessOf(l, confirmedOf(l), activityOf, options)),
          );
        },
      ),
    );
  });
});
