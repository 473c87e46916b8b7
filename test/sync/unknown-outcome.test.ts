import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SyncCandidate, SyncItem } from "../../src/core/sync/item.js";
import { episodeVerdict } from "../../src/core/sync/policy.js";
import { DEFAULT_SCHEDULE } from "../../src/core/sync/queue.js";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { SyncLog } from "../../src/sync/sync-log.js";
import { MemoryTarget } from "../../src/sync/targets/memory-target.js";
import { SyncTargetError } from "../../src/sync/targets/target.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
let dir: string;
let seconds: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-unknown-"));
  seconds = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function episode(id: string): SyncCandidate {
  const item: SyncItem = {
    type: "episode",
    local_id: id,
    title: `Episode ${id}`,
    privacy: "public",
    occurred_at: new Date(T0).toISOString(),
    fields: { confidence: 0.9, outcome: "failure", local_id: id },
    content: `text of ${id}`,
  };
  return { item, verdict: episodeVerdict({ confidence: 0.9, outcome: "failure" }) };
}

function options(target: MemoryTarget): EngineOptions {
  return {
    store: new QueueStore(dir, target.name),
    target,
    schedule: DEFAULT_SCHEDULE,
    clock: () => new Date(T0 + seconds * 1000).toISOString(),
    log: new SyncLog(join(dir, "log"), 8),
    sealKey: () => undefined,
  };
}

const record = (key: string) => new QueueStore(dir, "memory").load().records[key];
const down = () => new SyncTargetError("HTTP 503", "unavailable");

describe("a send whose outcome is unknown", () => {
  it("is looked up by its key, and not created again while the store's queries may lag", async () => {
    const target = new MemoryTarget();
    target.queryLag = true;
    // Written, then answered 503: the engine cannot know the page exists.
    target.failAfterWrite(down());
    const items = [episode("a")];
    const first = await runSync(items, options(target));
    expect(first.sent).toMatchObject({ created_or_updated: 0, retry_later: 1 });
    expect(record("episode:a")?.unknown_since).toBe(new Date(T0).toISOString());
    // The retry comes due after a minute; the query still lags, but not for ever: the engine
    // waits for the settle time counted from the failure, which has passed.
    seconds = 30;
    const early = await runSync(items, options(target));
    expect(early.sent.created_or_updated).toBe(0);
    target.catchUp();
    seconds = 60;
    const later = await runSync(items, options(target));
    expect(later.sent.created_or_updated).toBe(1);
    expect(target.creates).toBe(1);
    expect(target.updates).toBe(1);
    expect(record("episode:a")).toMatchObject({ state: "synced", unknown_since: null });
  });

  it("after a crash in flight, a miss is believed only a settle time after the run that found it", async () => {
    const target = new MemoryTarget();
    target.queryLag = true;
    const store = new QueueStore(dir, target.name);
    // The process dies between the create and the record of its answer.
    const dying = Object.assign(Object.create(target) as MemoryTarget, {
      upsert: async (item: Parameters<MemoryTarget["upsert"]>[0], id: string | null) => {
        await target.upsert(item, id);
        throw new Error("killed");
      },
    });
    await runSync([episode("a")], { ...options(target), store, target: dying }).catch(() => null);
    // Simulate the crash: put the record back in flight, as the journal had it.
    const q = store.load();
    const r = q.records["episode:a"];
    if (r === undefined) throw new Error("no record");
    store.commit(
      {
        ...q,
        records: {
          ...q.records,
          "episode:a": {
            ...r,
            state: "pending",
            inflight_at: r.last_attempt_at,
            unknown_since: null,
            next_at: null,
          },
        },
      },
      ["episode:a"],
    );
    seconds = 3600;
    const next = await runSync([episode("a")], options(target));
    expect(next.sent).toMatchObject({ created_or_updated: 0, deferred: 1 });
    expect(record("episode:a")?.unknown_since).toBe(new Date(T0 + 3600_000).toISOString());
    seconds = 3630;
    expect((await runSync([episode("a")], options(target))).sent.created_or_updated).toBe(0);
    target.catchUp();
    seconds = 3660;
    expect((await runSync([episode("a")], options(target))).sent.created_or_updated).toBe(1);
    expect(target.creates).toBe(1);
  });

  it("stays unknown when the lookup itself is refused (429), and is looked up again", async () => {
    const target = new MemoryTarget();
    const store = new QueueStore(dir, target.name);
    target.failAfterWrite(down());
    await runSync([episode("c")], options(target));
    // The lookup is rate limited once; the record must keep its unknown outcome.
    let refused = 0;
    const limited = Object.assign(Object.create(target) as MemoryTarget, {
      findByKey: async (type: "episode", key: string) => {
        if (refused++ === 0) throw new SyncTargetError("rate limited", "rate_limited", 1);
        return target.findByKey(type, key);
      },
    });
    seconds = 60;
    await runSync([episode("c")], { ...options(target), store, target: limited });
    expect(store.load().records["episode:c"]?.unknown_since).not.toBeNull();
    seconds = 400;
    const r = await runSync([episode("c")], { ...options(target), store, target: limited });
    expect(r.sent.created_or_updated).toBe(1);
    expect(target.creates).toBe(1);
  });

  it("a store whose queries never show the item gets it again once the settle time has passed", async () => {
    const target = new MemoryTarget();
    target.failNext(down());
    await runSync([episode("b")], options(target));
    seconds = 60;
    const r = await runSync([episode("b")], options(target));
    expect(r.sent.created_or_updated).toBe(1);
    expect(target.creates).toBe(1);
  });
});

describe("failed items", () => {
  it("transient failures go back to pending once the store is healthy; permanent ones stay failed", async () => {
    const target = new MemoryTarget();
    target.failNext(down(), down(), down(), down());
    const items = [episode("t")];
    for (const at of [0, 60, 360, 2160]) {
      seconds = at;
      await runSync(items, options(target));
    }
    expect(record("episode:t")).toMatchObject({
      state: "failed",
      failure: "transient",
      attempts: 4,
    });
    seconds = 3000;
    const r = await runSync(items, options(target));
    expect(r.notices.join("\n")).toContain("failed for transient reasons are pending again");
    expect(record("episode:t")?.state).toBe("synced");
    target.failNext(new SyncTargetError("too long", "validation"));
    const both = [...items, episode("p")];
    const refused = await runSync(both, options(target));
    expect(record("episode:p")).toMatchObject({ state: "failed", failure: "permanent" });
    expect(refused.sent).toMatchObject({ created_or_updated: 0, failed: 1, skipped: 0 });
    seconds = 9000;
    await runSync(both, options(target));
    expect(record("episode:p")?.state).toBe("failed");
    expect(target.creates).toBe(1);
  });
});
