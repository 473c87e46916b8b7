import { describe, expect, it } from "vitest";
import { entityMatcher } from "../../src/core/graph/entities.js";
import { learningsOf } from "../../src/core/graph/learnings.js";
import { learningCandidates } from "../../src/core/sync/learning-items.js";
import { defaultConfig } from "../../src/schema/config.js";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { schemaFromMapping } from "../../src/sync/targets/tana-schema.js";
import type { TanaTarget } from "../../src/sync/targets/tana-target.js";
import { FakeTana, TANA_LIMITS } from "../support/fake-tana.js";
import {
  initTana,
  openTanaTarget,
  seedTanaEntities,
  TANA_AT,
  TANA_REGISTRY,
  TANA_TAGS,
  tanaCandidates,
  type tanaConfig,
  tanaEngine,
  tanaEngrams,
  tanaLearningNodes,
  tempSyncDir,
  useFakeTana,
} from "../support/tana-fixtures.js";

const NAMES = TANA_TAGS;
const AT = TANA_AT;
const fake = useFakeTana();

const openTarget = (store: QueueStore, extra: Parameters<typeof tanaConfig>[1] = {}) =>
  openTanaTarget(fake.tana, store, extra);

function engine(store: QueueStore, target: TanaTarget): EngineOptions {
  return tanaEngine(store, target, fake.dir, () => AT);
}

const init = initTana;
const learningNodes = () => tanaLearningNodes(fake.tana);

describe("Tana target against the Tana stand-in", () => {
  it("syncs 150 learnings twice: no duplicate, no call over the limits, links only to existing entities", async () => {
    const entities = seedTanaEntities(fake.tana);
    const store = new QueueStore(fake.dir, "tana");
    const first = openTarget(store);
    await init(store, first);
    const candidates = tanaCandidates(tanaEngrams(150));
    expect(candidates).toHaveLength(150);

    const r1 = await runSync(candidates, engine(store, first));
    expect(r1.sent.created_or_updated).toBe(150);
    expect(learningNodes()).toHaveLength(150);

    // A second run, in a new process: the mapping says everything is there.
    const callsBefore = fake.tana.calls.length;
    const second = openTarget(store);
    const r2 = await runSync(tanaCandidates(tanaEngrams(150)), engine(store, second));
    expect(r2.sent.created_or_updated).toBe(0);
    expect(fake.tana.calls.length).toBe(callsBefore);

    const nodes = learningNodes();
    expect(nodes).toHaveLength(150);
    const ids = schemaFromMapping(store.load().mapping, NAMES);
    const seedField = ids?.fields.learning.seedEntryId as string;
    const seedIds = nodes.map((n) => n.fields.get(seedField)?.[0]);
    expect(new Set(seedIds).size).toBe(150);

    // Every accepted call kept to Tana's limits, and none was refused.
    expect(fake.tana.refused).toEqual({ rate: 0, nodes: 0, chars: 0 });
    for (const call of fake.tana.calls) {
      expect(call.status).toBe(200);
      expect(call.nodes).toBeLessThanOrEqual(TANA_LIMITS.maxNodes);
      expect(call.chars).toBeLessThanOrEqual(TANA_LIMITS.maxChars);
      if (call.gap !== null) expect(call.gap).toBeGreaterThanOrEqual(1000 / fake.tana.perSecond);
    }
    // Batched: far fewer calls than learnings.
    expect(fake.tana.calls.length).toBeLessThan(150 / 3);

    // Links: only Ada, Grace and Atlas (which Tana has); Bob and Zephyr are never created.
    const existing = new Set(Object.values(entities));
    const people = ids?.fields.learning.relatedPeople as string;
    const projects = ids?.fields.learning.relatedProjects as string;
    const refs = nodes.flatMap((n) => [
      ...(n.fields.get(people) ?? []),
      ...(n.fields.get(projects) ?? []),
    ]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(existing.has(ref.replace(/^ref:/, ""))).toBe(true);
    const names = [...fake.tana.store.nodes.values()].map((n) => n.name);
    expect(names.filter((n) => /Bob|Zephyr/.test(n) && !n.startsWith("retry"))).toEqual([]);
    expect(first.linkNotes().join("\n")).toMatch(/person:bob \(not found: no #person node named/);
    expect(first.links.linked).toBeGreaterThan(0);
  });

  it("keeps to Tana's own one call a second with the default calls_per_second", async () => {
    const real = new FakeTana({ token: "input-token", localToken: "local-token" });
    await real.start();
    const tmp = tempSyncDir();
    try {
      expect(real.perSecond).toBe(TANA_LIMITS.perSecond);
      const store = new QueueStore(tmp.dir, "tana");
      const { calls_per_second } = defaultConfig().sync.tana;
      const target = openTanaTarget(real, store, { calls_per_second });
      await init(store, target);
      await runSync(
        tanaCandidates(tanaEngrams(6)),
        tanaEngine(store, target, tmp.dir, () => AT),
      );
      expect(tanaLearningNodes(real)).toHaveLength(6);
      expect(real.refused.rate).toBe(0);
      const gaps = real.calls.flatMap((c) => (c.gap === null ? [] : [c.gap]));
      expect(gaps.length).toBeGreaterThan(0);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1000);
    } finally {
      await real.stop();
      tmp.remove();
    }
  });

  it("updates a changed learning in place through the Local API, and annotates it without", async () => {
    seedTanaEntities(fake.tana);
    const store = new QueueStore(fake.dir, "tana");
    const target = openTarget(store);
    await init(store, target);
    await runSync(tanaCandidates(tanaEngrams(12)), engine(store, target));
    expect(learningNodes()).toHaveLength(12);

    // Step 0 revised: a new claim (a new node); its engram changed, so the source field of
    // the other nine learnings it states changed too (updated, not created again).
    const changed = tanaCandidates(tanaEngrams(12, 1));
    const r = await runSync(changed, engine(store, openTarget(store)));
    expect(r.sent.created_or_updated).toBe(10);
    expect(learningNodes()).toHaveLength(13);

    // The same key with new content (its confidence changed): updated, not created.
    const bumped = changed.map((c, i) =>
      i === 3 ? { ...c, item: { ...c.item, fields: { ...c.item.fields, confidence: 0.5 } } } : c,
    );
    const viaLocal = openTarget(store);
    await runSync(bumped, engine(store, viaLocal));
    expect(learningNodes()).toHaveLength(13);
    const conf = schemaFromMapping(store.load().mapping, NAMES)?.fields.learning
      .confidence as string;
    const key = bumped[3]?.item.local_id as string;
    const node = learningNodes().find((n) => n.description.includes(key));
    expect(node?.fields.get(conf)).toEqual(["5"]);

    // Without the Local API: the Input API adds a child carrying the new values.
    const again = bumped.map((c, i) =>
      i === 3 ? { ...c, item: { ...c.item, fields: { ...c.item.fields, confidence: 0.7 } } } : c,
    );
    const inputOnly = openTarget(store, { local_api_url: undefined });
    await runSync(again, engine(store, inputOnly));
    expect(learningNodes()).toHaveLength(13);
    const child = fake.tana.store.nodes.get(node?.children.at(-1) as string);
    expect(child?.name).toMatch(/^engram update /);
    expect(child?.fields.get(conf)).toEqual(["7"]);
  });

  it("queues everything while the desktop app is closed and delivers it once when it opens", async () => {
    const store = new QueueStore(fake.dir, "tana");
    const target = openTarget(store);
    await init(store, target);
    fake.tana.setLocalDown(true);
    const down = await runSync(tanaCandidates(tanaEngrams(20)), engine(store, openTarget(store)));
    expect(down.mode).toBe("local-only");
    expect(down.depth.pending).toBe(20);
    expect(down.notices.join("\n")).toMatch(
      /tana: unreachable .*local-only mode, 20 item\(s\) stay queued/,
    );
    expect(learningNodes()).toHaveLength(0);

    fake.tana.setLocalDown(false);
    const up = await runSync(tanaCandidates(tanaEngrams(20)), engine(store, openTarget(store)));
    expect(up.sent.created_or_updated).toBe(20);
    expect(learningNodes()).toHaveLength(20);
  });

  it("splits a learning over 5000 characters into parts, none lost", async () => {
    const store = new QueueStore(fake.dir, "tana");
    const target = openTarget(store);
    await init(store, target);
    const [base] = tanaCandidates(tanaEngrams(1));
    if (base === undefined) throw new Error("no candidate");
    const long = `${'a long lesson with "quotes" and\nnew lines '.repeat(300)}END`;
    const item = { ...base.item, content: long };
    await runSync([{ ...base, item }], engine(store, target));
    const [node] = learningNodes();
    const content = schemaFromMapping(store.load().mapping, NAMES)?.fields.learning
      .content as string;
    const parts = [
      node?.fields.get(content)?.[0] ?? "",
      ...(node?.children ?? []).map((id) => fake.tana.store.nodes.get(id)?.name ?? ""),
    ];
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe(long);
    for (const call of fake.tana.calls)
      expect(call.chars).toBeLessThanOrEqual(TANA_LIMITS.maxChars);
  });

  it("sends proposals as proposal nodes with their status", async () => {
    const store = new QueueStore(fake.dir, "tana");
    const target = openTarget(store);
    await init(store, target);
    const engrams = tanaEngrams(3);
    const [a, b, c] = learningsOf(engrams).map((l) => entityMatcher(TANA_REGISTRY).link(l));
    if (a === undefined || b === undefined || c === undefined) throw new Error("no learnings");
    const candidates = learningCandidates(
      {
        confirmed: [a],
        proposals: [
          { learning: b, status: "pending", decided_at: null, extracted_from: "engram PR #7" },
          {
            learning: c,
            status: "rejected",
            decided_at: "2026-01-04T09:00:00.000Z",
            extracted_from: "engram PR #6",
          },
        ],
      },
      new Map(engrams.map((e) => [e.engram_id, e])),
      { default_privacy: "private", default_confidence: 0.5, project: "p" },
    );
    const r = await runSync(candidates, engine(store, target));
    expect(r.sent.created_or_updated).toBe(3);
    const ids = schemaFromMapping(store.load().mapping, NAMES);
    const tag = fake.tana.store.tagByName("pai_proposal");
    const proposals = fake.tana.store.tagged(tag?.id ?? "");
    const status = ids?.fields.proposal.status as string;
    const from = ids?.fields.proposal.extractedFrom as string;
    expect(proposals.map((n) => n.fields.get(status)?.[0]).sort()).toEqual(["pending", "rejected"]);
    expect(proposals.map((n) => n.fields.get(from)?.[0]).sort()).toEqual([
      "engram PR #6",
      "engram PR #7",
    ]);
    expect(learningNodes()).toHaveLength(1);
  });
});
