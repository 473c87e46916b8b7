import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { bodyLinker } from "../../src/core/compaction/pack.js";
import { type BatchRecord, planCycle } from "../../src/core/compaction/plan.js";
import { knownClaims } from "../../src/core/graph/claims.js";
import { capEntities, entityMatcher, linkLearning } from "../../src/core/graph/entities.js";
import { type Learning, learningId, learningsOf } from "../../src/core/graph/learnings.js";
import { emptyCatalog, serializeEngram } from "../../src/core/model/engram.js";
import { defaultConfig, type MemoryConfig } from "../../src/schema/config.js";
import { type Catalog, Engram } from "../../src/schema/engram.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import { Registry } from "../../src/schema/registry.js";
import { memoryEvent } from "./engine-fixtures.js";

const registry = Registry.parse({
  people: [{ id: "ada", name: "Ada Lovelace", aliases: ["ada"], emails: ["ada@example.com"] }],
  projects: [{ id: "engine", name: "Engine", paths: ["src/engine/**"] }],
  components: [{ id: "parser", name: "Parser", paths: ["src/*/parse.ts"] }],
});
const matcher = entityMatcher(registry);
const policy = {
  engram_max_bytes: 16384,
  stall_seconds: 300,
  promote_min_confidence: 0.5,
  max_groups: 24,
};
const memory = (over: Partial<MemoryConfig> = {}): MemoryConfig => ({
  ...defaultConfig().memory,
  ...over,
});

function slice(from: number, texts: string[], fields: Partial<MemoryEvent> = {}): MemoryEvent[] {
  return texts.map((text, i) =>
    memoryEvent(from + i, { kind: "lesson", text, topics: ["ci"], ...fields }),
  );
}

/**
 * Cycles over slices as the Director runs them: each plan sees the engrams before it, and
 * the batch record the last one left (as the buffer's meta carries it).
 */
function cycles(slices: MemoryEvent[][], over: Partial<MemoryConfig> = {}, from = start()) {
  let { catalog, lastBatch } = from;
  const engrams = new Map(from.engrams);
  const plans = [];
  const states = [];
  for (const events of slices) {
    const plan = planCycle({
      slice: events,
      catalog,
      engrams,
      recalls: new Map(),
      memory: memory(over),
      asOf: events[events.length - 1]?.received_at as string,
      registry,
      lastBatch,
    });
    for (const e of plan.written) engrams.set(e.engram_id, e);
    catalog = plan.catalog;
    lastBatch = plan.batch ?? lastBatch;
    plans.push(plan);
    states.push({ catalog, engrams: new Map(engrams), lastBatch });
  }
  return { plans, engrams, states };
}

interface CycleState {
  catalog: Catalog;
  engrams: ReadonlyMap<string, Engram>;
  lastBatch: BatchRecord | undefined;
}

function start(): CycleState {
  return { catalog: emptyCatalog(), engrams: new Map(), lastBatch: undefined };
}

describe("entity ids in engram files", () => {
  const events = [
    memoryEvent(1, {
      kind: "lesson",
      text: "Ada Lovelace says src/engine/plan.ts needs a lock (#12), see https://x.test/a @bob",
      topics: ["locks"],
      links: [{ type: "commit", ref: "1a2b3c4d5e6f7a8b" }],
    }),
    memoryEvent(2, { kind: "fact", text: "The parser retries twice", topics: ["locks"] }),
  ];

  it("carries sorted, unique registry and mention ids, no url, and links nothing unknown", () => {
    const [engram] = compactSlice(events, { ...policy, entities: bodyLinker(matcher) });
    expect(engram?.entities).toEqual([
      "commit:1a2b3c4d5e6f",
      "component:parser",
      "file:src/engine/plan.ts",
      "issue:12",
      "person:ada",
      "project:engine",
    ]);
    expect(Engram.parse(engram).entities).toEqual(engram?.entities);
    const plan = planCycle({
      slice: events,
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory: memory(),
      asOf: events[1]?.received_at as string,
      registry,
    });
    expect(plan.unlinked).toEqual(["@bob"]);
  });

  it("keeps people, projects and components first when an engram names more than 64", () => {
    const files = Array.from(
      { length: 70 },
      (_, i) => `file:src/f${String(i).padStart(2, "0")}.ts`,
    );
    const kept = capEntities([...files, "person:ada", "url:https://x.test", "issue:3"]);
    expect(kept).toHaveLength(64);
    expect(kept).toContain("person:ada");
    expect(kept).toContain("issue:3");
    expect(kept.some((id) => id.startsWith("url:"))).toBe(false);
    expect(kept).toEqual([...kept].sort());
  });

  it("is deterministic, and absent without a registry so older engrams keep their bytes", () => {
    const a = compactSlice(events, { ...policy, entities: bodyLinker(matcher) }).map(
      serializeEngram,
    );
    const b = compactSlice(events, {
      ...policy,
      entities: bodyLinker(entityMatcher(registry)),
    }).map(serializeEngram);
    expect(a).toEqual(b);
    const plain = compactSlice(events, policy);
    expect(plain[0]?.entities).toBeUndefined();
    // An engram written before the field existed still parses.
    expect(Engram.safeParse(plain[0]).success).toBe(true);
  });

  it("feeds the graph: learnings read the field instead of re-deriving", () => {
    const [engram] = compactSlice(events, { ...policy, entities: bodyLinker(matcher) }) as [Engram];
    // An item with no provenance of its own reads the engram's field.
    const { said_by: own, ...shared } = engram;
    expect(own).toBeDefined();
    const carried = { ...shared, entities: ["person:ada", "pr:7"] };
    const engrams = new Map([[engram.engram_id, carried]]);
    const parser = learningsOf([carried]).find((l) => l.text === "The parser retries twice");
    // The text alone would link component:parser; the file's field is what counts.
    expect(linkLearning(parser as Learning, engrams, matcher).entities).toEqual([
      "person:ada",
      "pr:7",
    ]);
    // An engram without the field (written before it existed) is linked from its text.
    const old = { ...engram };
    delete old.entities;
    expect(
      linkLearning(parser as Learning, new Map([[engram.engram_id, old]]), matcher).entities,
    ).toContain("component:parser");
    // An item with its own provenance is linked by its own links, not the engram's field.
    const ownEngram = { ...engram, entities: ["person:ada", "pr:7"] };
    const ownParser = learningsOf([ownEngram]).find((l) => l.text === "The parser retries twice");
    expect(
      linkLearning(ownParser as Learning, new Map([[engram.engram_id, ownEngram]]), matcher)
        .entities,
    ).toContain("component:parser");
  });
});

describe("dedup before create", () => {
  it("raises the evidence of a claim memory holds instead of restating it", () => {
    const { plans, engrams } = cycles([
      slice(1, ["Pin the Node version in CI", "Cache the npm folder"]),
      slice(3, ["pin the  node VERSION in ci", "Something new"]),
    ]);
    const second = plans[1]?.written[0] as Engram;
    expect(second.facts).toEqual(["Lesson: Something new"]);
    expect(second.evidence).toEqual({ [learningId("Pin the Node version in CI")]: 1 });
    const pinned = learningsOf([...engrams.values()]).find(
      (l) => l.id === learningId("Pin the Node version in CI"),
    );
    expect(pinned?.evidence).toBe(2);
    expect(pinned?.engrams).toHaveLength(1);
  });

  it("treats the same entity-linked claim as one: an alias names the same person", () => {
    const { plans } = cycles([
      slice(1, ["Ada Lovelace fixed the flaky test of #12"]),
      slice(2, ["ada fixed the flaky test of issue 12"]),
    ]);
    const second = plans[1]?.written[0] as Engram;
    expect(second.facts).toEqual([]);
    expect(second.evidence).toEqual({
      [learningId("Ada Lovelace fixed the flaky test of #12")]: 1,
    });
  });

  it("still promotes a claim repeated across cycles, counting its evidence", () => {
    const { plans } = cycles(
      [1, 2, 3].map((round) => slice(round * 10, ["Pin the Node version in CI"])),
      { promote_repeat_min: 3, promote_decisions: false },
    );
    expect(plans[1]?.promoted).toEqual([]);
    const lt = plans[2]?.promoted[0] as Engram;
    expect(lt.facts).toEqual(["Lesson: Pin the Node version in CI"]);
    expect(lt.promotion?.reasons[0]).toMatch(/^repeated in 3 engrams/);
  });

  it("raises the evidence of a claim written by a cycle of the same second", () => {
    // One fixed second for both cycles, as under one SOURCE_DATE_EPOCH: one batch.
    const at = { received_at: "2026-11-22T10:00:01.000Z" };
    const { plans } = cycles([
      slice(1, ["Pin the Node version in CI"], at),
      slice(2, ["pin the node version in CI"], at),
    ]);
    const [first, second] = plans.map((p) => p.written[0] as Engram);
    expect(second?.version).toBe(first?.version);
    expect(second?.facts).toEqual([]);
    expect(second?.evidence).toEqual({ [learningId("Pin the Node version in CI")]: 1 });
    expect(plans[1]?.batch).toEqual({
      version: first?.version,
      engrams: [first?.engram_id, second?.engram_id].sort(),
    });
  });

  it("compacts a slice whose run's end was lost to the same engrams, in a shared second too", () => {
    const at = { received_at: "2026-11-22T10:00:01.000Z" };
    const earlier = slice(1, ["Pin the Node version in CI"], at);
    const lost = slice(2, ["pin the node version in CI", "Cache the npm folder"], at);
    const { plans, states } = cycles([earlier, lost]);
    // The memory files of the lost run survived (a pushed branch), its state did not: the
    // slice is compacted again with the record the earlier cycle left.
    const before = states[0] as CycleState;
    const after = states[1] as CycleState;
    const { plans: again } = cycles([lost], {}, { ...after, lastBatch: before.lastBatch });
    expect(again[0]?.written).toEqual([]);
    expect(again[0]?.catalogChanged).toBe(false);
    expect(again[0]?.catalog.hash).toBe(plans[1]?.catalog.hash);
    // Without the record, the earlier cycle's engram would be left out too: a restated claim.
    const { plans: blind } = cycles([lost], {}, { ...before, lastBatch: undefined });
    expect(blind[0]?.written[0]?.facts).toContain("Lesson: pin the node version in CI");
  });

  it("compacts a slice again to the same engrams, not to evidence of itself", () => {
    const events = slice(1, ["Pin the Node version in CI"]);
    const first = compactSlice(events, policy);
    const again = compactSlice(events, {
      ...policy,
      known: knownClaims(first, matcher, new Set(first.map((e) => e.engram_id))),
    });
    expect(again.map(serializeEngram)).toEqual(first.map(serializeEngram));
    // Without leaving its own engrams out, the slice would be taken for evidence of itself.
    const self = compactSlice(events, { ...policy, known: knownClaims(first, matcher) });
    expect(self[0]?.facts).toEqual([]);
  });
});
