/**
 * A learning over Tana's 5000 characters goes as its node plus numbered content parts, one
 * Input API call each. A run killed (or answered with a failure) between the node and its
 * last part must leave, once later runs finish, every learning exactly once with its whole
 * content and no part twice or left over: with the Local API the content is written whole
 * and the parts trashed; with the Input API alone exactly the missing parts are posted, and a
 * part whose call went unanswered is not sent again blind. The stand-in's search lags 30 s
 * behind its writes; both clocks are the test's.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { TAG_FIELDS } from "../../src/core/sync/tana-nodes.js";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore, type StoredQueue } from "../../src/sync/queue-store.js";
import { writtenAt } from "../../src/sync/tana-open.js";
import { PartsJournal } from "../../src/sync/targets/tana-parts.js";
import { schemaFromMapping } from "../../src/sync/targets/tana-schema.js";
import type { TanaTarget } from "../../src/sync/targets/tana-target.js";
import type { TanaFault } from "../support/fake-tana.js";
import {
  initTana,
  openTanaTarget,
  TANA_TAGS,
  tanaCandidates,
  tanaContentOf,
  tanaEngine,
  tanaEngrams,
  useFakeTana,
} from "../support/tana-fixtures.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
let seconds = 0;
const iso = () => new Date(T0 + seconds * 1000).toISOString();
const fake = useFakeTana({ searchLagMs: 30_000, clock: () => T0 + seconds * 1000 });
beforeEach(() => {
  seconds = 0;
});

/** A target as a new process opens it: the Local API or not, the parts journal on disk. */
function open(store: QueueStore, local: boolean): TanaTarget {
  return openTanaTarget(fake.tana, store, local ? {} : { local_api_url: undefined }, {
    clock: iso,
    syncedAt: writtenAt(store.load().mapping),
    mapping: store.load().mapping,
    settleSeconds: 60,
    partsPath: join(fake.dir, "tana", "parts.json"),
  });
}

function engine(store: QueueStore, target: TanaTarget): EngineOptions {
  return tanaEngine(store, target, fake.dir, iso);
}

/** Three learnings, the first some 14,000 characters long: a node and three content parts. */
function candidates(): SyncCandidate[] {
  const [long, ...rest] = tanaCandidates(tanaEngrams(3));
  if (long === undefined) throw new Error("no candidate");
  const content = `${"a lesson learned the long way round, ".repeat(380)}END`;
  return [{ ...long, item: { ...long.item, content } }, ...rest];
}

/**
 * A run killed (as by kill -9) once its long learning's node exists and `k` of its 3 parts
 * have been answered: in the wait before the next part leaves, or (k = 3) after the last
 * part, before the engine journals the outcome. Nothing after that is journalled.
 */
async function killedAfterParts(store: QueueStore, items: SyncCandidate[], k: number) {
  const dying = Object.create(store) as QueueStore;
  let killed = false;
  let answered = 0;
  const target = open(store, true);
  const upsertBatch = target.upsertBatch.bind(target);
  const longKey = `learning:${items[0]?.item.local_id}`;
  target.upsertBatch = async (batch) => {
    const out = await upsertBatch(batch);
    if (answered === 3 && k === 3 && batch.some((e) => e.item.key === longKey)) killed = true;
    return out;
  };
  const post = target.input.post.bind(target.input);
  target.input.post = async (body, ...rest) => {
    const isPart = /^content, part /.test(body.nodes[0]?.description ?? "");
    if (isPart && answered === k) {
      killed = true;
      throw new Error("killed");
    }
    const out = await post(body, ...rest);
    if (isPart) answered++;
    return out;
  };
  dying.commit = (after: StoredQueue, keys: Iterable<string>, removed?: Iterable<string>) => {
    if (killed) throw new Error("killed");
    store.commit(after, keys, removed);
  };
  await expect(runSync(items, engine(dying, target))).rejects.toThrow("killed");
  expect(killed).toBe(true);
}

/**
 * Every learning once, mapped to its node, its content whole, and its parts: none (the Local
 * API wrote it whole), or each of 2..n exactly once (the Input API alone); no annotation.
 */
function expectWhole(store: QueueStore, items: SyncCandidate[], parts: "none" | "each once") {
  expect([...fake.tana.copiesByKey().values()]).toEqual(items.map(() => 1));
  const q = store.load();
  const attr = schemaFromMapping(q.mapping, TANA_TAGS)?.fields.learning.content as string;
  for (const c of items) {
    const key = `learning:${c.item.local_id}`;
    expect(q.records[key]?.state).toBe("synced");
    const node = fake.tana.store.nodes.get(q.mapping[key]?.remote_id ?? "");
    if (node === undefined || node.inTrash) throw new Error(`${key}: no live node`);
    const { text, indexes } = tanaContentOf(fake.tana, node, attr);
    expect(text).toBe(c.item.content);
    const children = node.children.map((id) => fake.tana.store.nodes.get(id));
    expect(children.filter((n) => !n?.inTrash && /^engram update/.test(n?.name ?? ""))).toEqual([]);
    if (parts === "none" || indexes.length === 0) expect(indexes).toEqual([]);
    else expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, i) => i + 2));
  }
}

describe("Tana: content in parts under kill -9 and lost answers", () => {
  // Killed before any part, nothing stray is left for the Local API to find: k = 0 is the
  // Input API's case only (its node must be found without a search).
  for (const k of [1, 2, 3]) {
    it(`killed after ${k} of 3 parts, then runs with the Local API: written whole, the parts trashed`, async () => {
      const store = new QueueStore(fake.dir, "tana");
      await initTana(store, open(store, true));
      const items = candidates();
      await killedAfterParts(store, items, k);
      seconds = 5;
      await runSync(items, engine(store, open(store, true)));
      seconds = 65;
      await runSync(items, engine(store, open(store, true)));
      expectWhole(store, items, "none");
      seconds = 130;
      const again = await runSync(items, engine(store, open(store, true)));
      expect(again.sent.created_or_updated).toBe(0);
      expectWhole(store, items, "none");
    });
  }

  for (const k of [0, 1, 2, 3]) {
    it(`killed after ${k} of 3 parts, then runs with the Input API alone: exactly the missing parts`, async () => {
      const store = new QueueStore(fake.dir, "tana");
      await initTana(store, open(store, true));
      const items = candidates();
      await killedAfterParts(store, items, k);
      const before = fake.tana.writes;
      seconds = 5;
      await runSync(items, engine(store, open(store, false)));
      // The missing parts, and the learnings whose call never left: one call each here.
      const long = items[0] as SyncCandidate;
      const node = [...fake.tana.store.nodes.values()].find((n) =>
        n.description.startsWith(`engram learning:${long.item.local_id} `),
      );
      const made = node?.children.length ?? 0;
      expect(made).toBe(3);
      expectWhole(store, items, "each once");
      expect(fake.tana.writes - before).toBeLessThanOrEqual(3 - k + 2);
      seconds = 130;
      const again = await runSync(items, engine(store, open(store, false)));
      expect(again.sent.created_or_updated).toBe(0);
      expectWhole(store, items, "each once");
    });
  }

  const faults: [string, TanaFault][] = [
    ["answered 503 after the write", { kind: "status", status: 503, afterWrite: true }],
    ["whose answer is lost", { kind: "lost" }],
  ];
  for (const [name, fault] of faults) {
    it(`a part call ${name}: not sent again blind by the Input API, made whole by the Local API`, async () => {
      const store = new QueueStore(fake.dir, "tana");
      await initTana(store, open(store, true));
      const items = candidates();
      let failed = false;
      fake.tana.inputScript = (r) => {
        if (failed || !r.body.includes('"content, part 3 of')) return undefined;
        failed = true;
        return fault;
      };
      await runSync(items, engine(store, open(store, false)));
      expect(failed).toBe(true);
      const key = `learning:${(items[0] as SyncCandidate).item.local_id}`;
      const partIndexes = () => {
        const node = [...fake.tana.store.nodes.values()].find((n) =>
          n.description.startsWith(`engram ${key} `),
        );
        const q = store.load();
        const attr = schemaFromMapping(q.mapping, TANA_TAGS)?.fields.learning.content as string;
        return node === undefined ? [] : tanaContentOf(fake.tana, node, attr).indexes;
      };
      // Part 3 reached Tana; its answer did not: held, not posted a second time.
      seconds = 100;
      await runSync(items, engine(store, open(store, false)));
      expect(partIndexes()).toEqual([2, 3]);
      const held = store.load().records[key];
      expect(held?.state).not.toBe("synced");
      expect(held?.last_error).toMatch(/part 3 of 4 of its content may or may not have reached/);
      seconds = 500;
      await runSync(items, engine(store, open(store, true)));
      expectWhole(store, items, "none");
    });
  }
});

describe("Tana: sync init within the call limits", () => {
  for (const limits of [{ max_nodes_per_call: 20 }, { max_chars_per_call: 1000 }]) {
    it(`creates the schema in calls within ${JSON.stringify(limits)}`, async () => {
      const store = new QueueStore(fake.dir, "tana");
      const target = openTanaTarget(fake.tana, store, { ...limits, local_api_url: undefined });
      await initTana(store, target);
      const accepted = fake.tana.calls.filter((c) => c.status === 200);
      expect(accepted.length).toBe(fake.tana.calls.length);
      expect(accepted.length).toBeGreaterThan(2);
      for (const c of accepted) {
        expect(c.nodes).toBeLessThanOrEqual(limits.max_nodes_per_call ?? 100);
        expect(c.chars).toBeLessThanOrEqual(limits.max_chars_per_call ?? 5000);
      }
      const ids = schemaFromMapping(store.load().mapping, TANA_TAGS);
      for (const kind of ["learning", "proposal"] as const) {
        expect(Object.keys(ids?.fields[kind] ?? {}).sort()).toEqual([...TAG_FIELDS[kind]].sort());
        const tag = fake.tana.store.tagByName(TANA_TAGS[kind]);
        expect([...(tag?.fields.keys() ?? [])].sort()).toEqual(
          TAG_FIELDS[kind].map((f) => ids?.fields[kind][f]).sort(),
        );
      }
    });
  }

  it("refuses a limit below one supertag with its fields before creating anything, and says which", async () => {
    const store = new QueueStore(fake.dir, "tana");
    const target = openTanaTarget(fake.tana, store, { max_nodes_per_call: 10 });
    await expect(initTana(store, target)).rejects.toThrow(
      /max_nodes_per_call = 10 .*raise them to at least 19/,
    );
    expect(fake.tana.writes).toBe(0);
  });
});

describe("Tana: an update through the Input API alone", () => {
  it("carries long content whole in its annotation, and one whose answer was lost is not posted twice", async () => {
    const store = new QueueStore(fake.dir, "tana");
    await initTana(store, open(store, true));
    const items = candidates();
    await runSync(items, engine(store, open(store, false)));
    const key = `learning:${(items[0] as SyncCandidate).item.local_id}`;
    const revise = (content: string) =>
      items.map((c, i) => (i === 0 ? { ...c, item: { ...c.item, content } } : c));
    const attr = () =>
      schemaFromMapping(store.load().mapping, TANA_TAGS)?.fields.learning.content as string;
    const annotations = () =>
      (fake.tana.store.nodes.get(store.load().mapping[key]?.remote_id ?? "")?.children ?? [])
        .map((id) => fake.tana.store.nodes.get(id))
        .filter((n) => n !== undefined && !n.inTrash && /^engram update /.test(n.name));

    // A revision: one child annotation, its content whole (its own parts after its head).
    const revised = revise(`${"a lesson relearned the hard way, ".repeat(400)}END`);
    seconds = 10;
    await runSync(revised, engine(store, open(store, false)));
    expect(store.load().records[key]?.state).toBe("synced");
    const [first] = annotations();
    if (first === undefined) throw new Error("no annotation");
    expect(tanaContentOf(fake.tana, first, attr()).text).toBe(revised[0]?.item.content);

    // Another, whose annotation call is carried out and its answer lost: held, not posted again.
    const third = revise(`${"third time lucky, ".repeat(800)}END`);
    let failed = false;
    fake.tana.inputScript = (r) => {
      if (failed || !r.body.includes('"name":"engram update')) return undefined;
      failed = true;
      return { kind: "lost" };
    };
    seconds = 20;
    await runSync(third, engine(store, open(store, false)));
    seconds = 200;
    await runSync(third, engine(store, open(store, false)));
    expect(failed).toBe(true);
    expect(annotations()).toHaveLength(2);
    expect(store.load().records[key]?.last_error).toMatch(
      /annotation .* may or may not be in Tana/,
    );

    // The Local API writes it in place, whole, and trashes the annotations and parts.
    seconds = 600;
    await runSync(third, engine(store, open(store, true)));
    expect(annotations()).toEqual([]);
    expectWhole(store, third, "none");
  });
});

describe("Tana: the parts journal as read from the state folder", () => {
  it("keeps only entries that parse, and reads a torn or hostile file as empty", () => {
    const path = join(fake.dir, "tana", "parts.json");
    mkdirSync(join(fake.dir, "tana"), { recursive: true });
    const good = {
      node: "tn00000042",
      parent: "tn00000042",
      hash: `sha256:${"a".repeat(64)}`,
      bounds: [10, 20, 30],
      posted: [2],
      sending: null,
    };
    const entries = {
      "learning:good": good,
      "learning:path": { ...good, node: "../../etc/passwd" },
      "learning:hash": { ...good, hash: "md5:00" },
      "learning:bounds": { ...good, bounds: [-1, "x"] },
      "learning:null": null,
    };
    writeFileSync(path, JSON.stringify({ version: 1, entries }));
    const journal = new PartsJournal(path);
    expect(journal.get("learning:good")).toEqual(good);
    for (const key of Object.keys(entries).filter((k) => k !== "learning:good")) {
      expect(journal.get(key)).toBeUndefined();
    }
    writeFileSync(path, '{"entries": {"learning:good": ');
    expect(new PartsJournal(path).get("learning:good")).toBeUndefined();
  });
});
