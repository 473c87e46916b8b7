/**
 * The 60 s rule for Tana's batched calls: a call whose outcome is unknown (a process killed
 * between the request and the record of its answer, a 5xx after the write) is reconciled by
 * the learning's key through the Local API before anything is created again, and a miss is
 * believed only once the search index has had the settle time to show the node. The
 * stand-in's search lags 30 s behind its writes; both clocks are the test's.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore, type StoredQueue } from "../../src/sync/queue-store.js";
import { writtenAt } from "../../src/sync/tana-open.js";
import type { TanaTarget } from "../../src/sync/targets/tana-target.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import {
  initTana,
  openTanaTarget,
  tanaCandidates,
  tanaEngine,
  tanaEngrams,
  tempSyncDir,
} from "../support/tana-fixtures.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
const LAG_MS = 30_000;
let tana: FakeTana;
let tmp: { dir: string; remove: () => void };
let seconds: number;
const iso = () => new Date(T0 + seconds * 1000).toISOString();

beforeEach(async () => {
  tana = new FakeTana({
    token: "input-token",
    localToken: "local-token",
    searchLagMs: LAG_MS,
    perSecond: QUICK_TANA_RATE,
  });
  seconds = 0;
  tana.clock = () => T0 + seconds * 1000;
  await tana.start();
  tmp = tempSyncDir();
});
afterEach(async () => {
  await tana.stop();
  tmp.remove();
});

/** A target as a new process opens it, on the test's clock. */
function open(store: QueueStore, local = true): TanaTarget {
  return openTanaTarget(tana, store, local ? {} : { local_api_url: undefined }, {
    clock: iso,
    syncedAt: writtenAt(store.load().mapping),
    settleSeconds: 60,
  });
}

function engine(store: QueueStore, target: TanaTarget): EngineOptions {
  return tanaEngine(store, target, tmp.dir, iso);
}

/**
 * A run killed (as by kill -9) once its first call is carried out and before the call's
 * outcomes are journalled: the queue keeps those records in flight.
 */
async function killedRun(store: QueueStore, candidates: SyncCandidate[]): Promise<void> {
  const dying = Object.create(store) as QueueStore;
  let called = false;
  const target = open(store);
  const upsertBatch = target.upsertBatch.bind(target);
  target.upsertBatch = async (batch) => {
    const out = await upsertBatch(batch);
    called = true;
    return out;
  };
  dying.commit = (after: StoredQueue, keys: Iterable<string>, removed?: Iterable<string>) => {
    if (called) throw new Error("killed");
    store.commit(after, keys, removed);
  };
  await expect(runSync(candidates, engine(dying, target))).rejects.toThrow("killed");
}

const doubles = () => [...tana.copiesByKey()].filter(([, n]) => n > 1).map(([k]) => k);

describe("Tana: a batch whose outcome is unknown", () => {
  it("after a kill between the call and its record: looked up, not created again while search lags", async () => {
    const store = new QueueStore(tmp.dir, "tana");
    await initTana(store, open(store));
    const candidates = tanaCandidates(tanaEngrams(8));
    await killedRun(store, candidates);
    // The first call (as many learnings as fit in it) was carried out, its answer never recorded.
    const made = tana.copiesByKey().size;
    expect(made).toBeGreaterThan(0);
    const inflight = Object.values(store.load().records).filter((r) => r.inflight_at !== null);
    expect(inflight).toHaveLength(made);

    // Moments later the search does not show those nodes yet: they are not created again
    // (the learnings never sent are).
    seconds = 5;
    const early = await runSync(candidates, engine(store, open(store)));
    expect(early.sent).toMatchObject({ created_or_updated: 8 - made, deferred: made });
    expect(doubles()).toEqual([]);
    expect(tana.copiesByKey().size).toBe(8);

    // Once settled, the lookup finds every node: updated in place, mapped, never doubled.
    seconds = 65;
    const later = await runSync(candidates, engine(store, open(store)));
    expect(later.sent.created_or_updated).toBe(made);
    expect(doubles()).toEqual([]);
    expect(tana.copiesByKey().size).toBe(8);
    const q = store.load();
    expect(Object.values(q.records).every((r) => r.state === "synced")).toBe(true);
    const ids = new Set([...tana.store.nodes.values()].map((n) => n.id));
    for (const c of candidates)
      expect(ids.has(q.mapping[`learning:${c.item.local_id}`]?.remote_id ?? "")).toBe(true);
  });

  it("a call that never arrived (killed before it): created once the settle time has passed", async () => {
    const store = new QueueStore(tmp.dir, "tana");
    await initTana(store, open(store));
    const candidates = tanaCandidates(tanaEngrams(4));
    tana.setInputDown(true);
    await killedRun(store, candidates).catch(() => undefined);
    tana.setInputDown(false);
    // The run failed the call (not killed): put the records back in flight, as a kill leaves them.
    const q = store.load();
    const records = Object.fromEntries(
      Object.entries(q.records).map(([k, r]) => [
        k,
        { ...r, inflight_at: iso(), unknown_since: null, next_at: null, state: "pending" as const },
      ]),
    );
    store.commit({ ...q, records }, Object.keys(records));
    seconds = 10;
    expect((await runSync(candidates, engine(store, open(store)))).sent.deferred).toBe(4);
    expect(tana.copiesByKey().size).toBe(0);
    seconds = 70;
    expect((await runSync(candidates, engine(store, open(store)))).sent.created_or_updated).toBe(4);
    expect([...tana.copiesByKey().values()]).toEqual([1, 1, 1, 1]);
  });

  it("without the Local API an unknown create is held, not guessed, and said; with it, found", async () => {
    const store = new QueueStore(tmp.dir, "tana");
    await initTana(store, open(store));
    const candidates = tanaCandidates(tanaEngrams(3));
    await killedRun(store, candidates);
    for (const at of [100, 400, 2000, 5000]) {
      seconds = at;
      const r = await runSync(candidates, engine(store, open(store, false)));
      expect(r.sent.created_or_updated).toBe(0);
    }
    expect(doubles()).toEqual([]);
    const held = Object.values(store.load().records);
    expect(held.every((r) => r.state !== "synced")).toBe(true);
    expect(held[0]?.last_error).toMatch(/Input API cannot be searched/);
    seconds = 6000;
    const found = await runSync(candidates, engine(store, open(store)));
    expect(found.sent.created_or_updated).toBe(3);
    expect([...tana.copiesByKey().values()]).toEqual([1, 1, 1]);
  });

  it("a node written moments ago and missing from the lagging search is updated, not taken for gone", async () => {
    const store = new QueueStore(tmp.dir, "tana");
    await initTana(store, open(store));
    const candidates = tanaCandidates(tanaEngrams(3));
    expect((await runSync(candidates, engine(store, open(store)))).sent.created_or_updated).toBe(3);
    seconds = 10;
    const changed = candidates.map((c) => ({
      ...c,
      item: { ...c.item, fields: { ...c.item.fields, confidence: 0.61 } },
    }));
    const target = open(store);
    const r = await runSync(changed, engine(store, target));
    expect(r.sent.created_or_updated).toBe(3);
    expect(target.recreated).toEqual([]);
    expect([...tana.copiesByKey().values()]).toEqual([1, 1, 1]);
  });
});
