/**
 * Entity linking in Tana (seed 002, FR-7) against a stand-in whose search behaves like the
 * app's: names only, in an order of its own (newest first), the type filter honouring tags
 * that extend `#person`, 429 with an enforced Retry-After, 5xx, the app quitting mid-run. A
 * learning links to the existing `#person` / `#project` node it names, never to a new one,
 * and an entity not linked is said, with why.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { schemaFromMapping } from "../../src/sync/targets/tana-schema.js";
import type { TanaTarget } from "../../src/sync/targets/tana-target.js";
import { FakeTana, QUICK_TANA_RATE, type TanaRequest } from "../support/fake-tana.js";
import type { FakeNode } from "../support/fake-tana-store.js";
import {
  initTana,
  openTanaTarget,
  TANA_AT,
  TANA_TAGS,
  tanaCandidates,
  tanaEngine,
  tanaEngrams,
  tanaLearningNodes,
  tempSyncDir,
} from "../support/tana-fixtures.js";

let tana: FakeTana;
let tmp: { dir: string; remove: () => void };
/** The clock the client's Retry-After sleep moves and the stand-in enforces it on. */
let now: number;
const sleep = async (ms: number) => {
  now += ms;
};

beforeEach(async () => {
  tana = new FakeTana({
    token: "input-token",
    localToken: "local-token",
    perSecond: QUICK_TANA_RATE,
  });
  now = 0;
  tana.retryClock = () => now;
  await tana.start();
  tmp = tempSyncDir();
});
afterEach(async () => {
  await tana.stop();
  tmp.remove();
});

function engine(store: QueueStore, target: TanaTarget): EngineOptions {
  return tanaEngine(store, target, tmp.dir, () => TANA_AT);
}

/**
 * A lived-in workspace: Ada (#person), Grace (#colleague, which extends #person), Atlas
 * (#project), and, made after them, many meetings whose names mention Ada and Atlas.
 */
function livedIn(): { ada: string; grace: string; atlas: string } {
  const ada = tana.store.addEntity("Ada Lovelace", "person");
  tana.store.addTag("colleague", "person");
  const grace = tana.store.addEntity("Grace Hopper", "colleague");
  const atlas = tana.store.addEntity("Atlas", "project");
  for (let i = 0; i < 30; i++) {
    tana.store.addNode(`1:1 with Ada Lovelace, week ${i}`);
    tana.store.addNode(`Atlas planning, week ${i}`);
  }
  return { ada, grace, atlas };
}

/** Each learning's linked people and projects, by the word the learning names them with. */
function linksOf(nodes: readonly FakeNode[], store: QueueStore) {
  const ids = schemaFromMapping(store.load().mapping, TANA_TAGS)?.fields.learning;
  const refs = (n: FakeNode, attr: string | undefined) =>
    (n.fields.get(attr ?? "") ?? []).map((r) => r.replace(/^ref:/, ""));
  return nodes.map((n) => ({
    name: n.name,
    people: refs(n, ids?.relatedPeople),
    projects: refs(n, ids?.relatedProjects),
  }));
}

/** Searches for an entity (by name), not the listing of engram's own nodes. */
const byName = (r: TanaRequest) => r.path === "/nodes/search" && r.query.includes("textContains");

describe("entity linking in Tana", () => {
  it("links the 13 learnings naming Ada to her #person node, found past 30 meetings naming her", async () => {
    const { ada, grace, atlas } = livedIn();
    const local: TanaRequest[] = [];
    tana.localScript = (r) => {
      local.push(r);
      return undefined;
    };
    const store = new QueueStore(tmp.dir, "tana");
    const target = openTanaTarget(tana, store, {}, { sleep });
    await initTana(store, target);
    const before = tana.store.nodes.size;
    const r = await runSync(tanaCandidates(tanaEngrams(52)), engine(store, target));
    expect(r.sent.created_or_updated).toBe(52);

    const links = linksOf(tanaLearningNodes(tana), store);
    const naming = (word: string) => links.filter((l) => new RegExp(`as ${word}\\b`).test(l.name));
    expect(naming("Ada")).toHaveLength(13);
    for (const l of naming("Ada")) expect(l.people).toEqual([ada]);
    for (const l of naming("Grace")) expect(l.people).toEqual([grace]);
    for (const l of links.filter((l) => / Atlas found/.test(l.name))) {
      expect(l.projects).toEqual([atlas]);
    }
    // Bob and Zephyr have no node: not linked, nothing made for them.
    for (const l of [...naming("Bob"), ...naming("Zephyr")]) {
      expect([...l.people, ...l.projects]).toEqual([]);
    }
    expect(tana.store.nodes.size - before).toBe(52);
    expect(target.links).toMatchObject({ linked: 13 + 7 + 13, ambiguous: 0, failed: 0 });
    expect(target.linkNotes().sort()).toEqual([
      'tana: not linked in 6 item(s): project:zephyr (not found: no #project node named "Zephyr" in Tana)',
      'tana: not linked in 7 item(s): person:bob (not found: no #person node named "Bob Nobody" or "Bob" in Tana)',
    ]);
    // Cached for the run: one search per name of each entity, not one per learning.
    expect(local.filter(byName).length).toBeLessThanOrEqual(3 + 2 + 3 + 1 + 2 + 2);
  });

  it("links no one when two #person nodes carry the name, and says which", async () => {
    livedIn();
    const twin = tana.store.addEntity("Ada Lovelace", "person");
    const store = new QueueStore(tmp.dir, "tana");
    const target = openTanaTarget(tana, store, {}, { sleep });
    await initTana(store, target);
    await runSync(tanaCandidates(tanaEngrams(8)), engine(store, target));
    const ada = linksOf(tanaLearningNodes(tana), store).filter((l) => / Ada\b/.test(l.name));
    expect(ada.length).toBeGreaterThan(0);
    for (const l of ada) expect(l.people).toEqual([]);
    expect(target.links.ambiguous).toBe(ada.length);
    expect(target.linkNotes().join("\n")).toMatch(
      new RegExp(`person:ada \\(ambiguous: 2 #person nodes are named "Ada Lovelace" \\(.*${twin}`),
    );
  });

  it("waits out a 429's Retry-After, goes on through a 503, and stops asking once the app quits", async () => {
    const { ada, grace, atlas } = livedIn();
    let n = 0;
    tana.localScript = (r) => {
      if (!byName(r)) return;
      n++;
      if (n === 1) return { kind: "status", status: 429, retryAfter: 2 };
      if (n === 5) return { kind: "status", status: 503 };
      if (n === 8) tana.setLocalDown(true);
      return undefined;
    };
    const store = new QueueStore(tmp.dir, "tana");
    const target = openTanaTarget(tana, store, {}, { sleep });
    await initTana(store, target);
    const r = await runSync(tanaCandidates(tanaEngrams(16)), engine(store, target));
    // Every learning is written once, with or without its links.
    expect(r.sent.created_or_updated).toBe(16);
    expect(tanaLearningNodes(tana)).toHaveLength(16);
    expect(tana.earlyRequests).toBe(0);
    expect(now).toBe(2000);
    const links = linksOf(tanaLearningNodes(tana), store).flatMap((l) => [
      ...l.people,
      ...l.projects,
    ]);
    for (const id of links) expect([ada, grace, atlas]).toContain(id);
    expect(target.links.linked).toBeGreaterThan(0);
    expect(target.links.failed).toBeGreaterThan(0);
    const notes = target.linkNotes().join("\n");
    expect(notes).toMatch(/lookup failed: Tana Local API GET \/nodes\/search: 503/);
    expect(notes).toMatch(/unreachable.*no further lookups this run/);
  });
});
