import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSealed, sealText } from "../../src/core/ingest/seal.js";
import type { SyncCandidate, SyncItem } from "../../src/core/sync/item.js";
import { deriveSyncKey } from "../../src/core/sync/outgoing.js";
import { episodeVerdict } from "../../src/core/sync/policy.js";
import { DEFAULT_SCHEDULE, setApproval } from "../../src/core/sync/queue.js";
import { type EngineOptions, runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { SyncLog } from "../../src/sync/sync-log.js";
import { MemoryTarget } from "../../src/sync/targets/memory-target.js";
import { SyncTargetError } from "../../src/sync/targets/target.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
const KEY = new Uint8Array(32).fill(7);

let dir: string;
let seconds: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-sync-"));
  seconds = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function episode(
  id: string,
  confidence: number,
  outcome: "success" | "failure" | "partial" | "abandoned",
  privacy: SyncItem["privacy"] = "public",
  text = `text of ${id}`,
): SyncCandidate {
  const item: SyncItem = {
    type: "episode",
    local_id: id,
    title: `Episode: ${text}`,
    privacy,
    occurred_at: new Date(T0).toISOString(),
    fields: { confidence, outcome, local_id: id, tags: ["secret-topic"] },
    content: text,
  };
  return { item, verdict: episodeVerdict({ confidence, outcome }) };
}

function options(target: MemoryTarget, extra: Partial<EngineOptions> = {}): EngineOptions {
  return {
    store: new QueueStore(dir, target.name),
    target,
    schedule: DEFAULT_SCHEDULE,
    clock: () => new Date(T0 + seconds * 1000).toISOString(),
    log: new SyncLog(join(dir, "log"), 8),
    sealKey: () => KEY,
    ...extra,
  };
}

const SIX = [
  episode("a", 0.9, "failure"),
  episode("b", 0.6, "success"),
  episode("c", 0.1, "success"),
  episode("d", 0.5, "partial"),
  episode("e", 0.2, "abandoned"),
  episode("f", 0.45, "partial"),
];

describe("sync engine", () => {
  it("sends what the policy accepts once; a second run creates nothing", async () => {
    const target = new MemoryTarget();
    const first = await runSync(SIX, options(target));
    expect([...target.items.keys()].sort()).toEqual(["episode:a", "episode:b", "episode:c"]);
    expect(first.sent.created_or_updated).toBe(3);
    seconds = 3600;
    const second = await runSync(SIX, options(target));
    expect(second.sent.created_or_updated).toBe(0);
    expect(target.creates).toBe(3);
    expect(target.updates).toBe(0);
  });

  it("does not build candidates again when memory has not changed", async () => {
    const target = new MemoryTarget();
    let built = 0;
    const source = async () => {
      built++;
      return SIX;
    };
    await runSync(source, { ...options(target), sourceHash: "catalog-1" });
    seconds = 10;
    await runSync(source, { ...options(target), sourceHash: "catalog-1" });
    expect(built).toBe(1);
    await runSync(source, { ...options(target), sourceHash: "catalog-2" });
    expect(built).toBe(2);
    expect(target.creates).toBe(3);
  });

  it("never sends private items, and sensitive ones only approved and sealed", async () => {
    const target = new MemoryTarget();
    const items = [
      episode("p", 0.9, "failure", "private", "private words"),
      episode("s", 0.9, "failure", "sensitive", "sensitive words"),
    ];
    const first = await runSync(items, options(target));
    expect(target.items.size).toBe(0);
    expect(first.queued.private).toBe(1);
    expect(first.awaiting_approval).toEqual(["episode:s"]);
    const store = new QueueStore(dir, target.name);
    const q = store.load();
    store.commit(setApproval(q, "episode:s", "approved"), ["episode:s"]);
    await runSync(items, options(target));
    const sent = target.items.get("episode:s");
    expect(sent?.encrypted).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("sensitive words");
    expect(JSON.stringify(sent)).not.toContain("secret-topic");
    expect(openSealed(deriveSyncKey(KEY), JSON.parse(sent?.content ?? ""))).toBe("sensitive words");
    expect(target.items.has("episode:p")).toBe(false);
  });

  it("opens locally sealed content and seals it again under the sync key", async () => {
    const target = new MemoryTarget();
    const c = episode("z", 0.9, "failure", "sensitive", "");
    c.item = { ...c.item, sealed_content: [sealText(KEY, "text", "sealed words")] };
    await runSync([c], options(target));
    const store = new QueueStore(dir, target.name);
    store.commit(setApproval(store.load(), "episode:z", "approved"), ["episode:z"]);
    await runSync([c], options(target));
    const sent = target.items.get("episode:z");
    expect(openSealed(deriveSyncKey(KEY), JSON.parse(sent?.content ?? ""))).toBe("sealed words");
  });

  it("retries after the schedule, looks the item up first, then fails", async () => {
    const target = new MemoryTarget();
    const down = () => new SyncTargetError("HTTP 500", "unavailable");
    target.failNext(down());
    const items = [episode("a", 0.9, "failure")];
    const r1 = await runSync(items, options(target));
    expect(r1.sent.retry_later).toBe(1);
    seconds = 59;
    expect((await runSync(items, options(target))).sent.created_or_updated).toBe(0);
    seconds = 60;
    expect((await runSync(items, options(target))).sent.created_or_updated).toBe(1);
    target.failNext(down(), down(), down(), down());
    const b = [episode("b", 0.9, "failure")];
    for (const at of [100, 160, 460, 2260]) {
      seconds = at;
      await runSync(b, options(target));
    }
    const q = new QueueStore(dir, target.name).load();
    expect(q.records["episode:b"]).toMatchObject({ state: "failed", attempts: 4 });
  });

  it("waits out Retry-After, pauses on a schema mismatch, disables on auth, fails invalid items", async () => {
    const target = new MemoryTarget();
    target.failNext(new SyncTargetError("rate limited", "rate_limited", 120));
    const items = [episode("a", 0.9, "failure"), episode("b", 0.9, "failure")];
    const r = await runSync(items, options(target));
    expect(r.sent).toMatchObject({ created_or_updated: 0, retry_later: 1 });
    seconds = 119;
    await runSync(items, options(target));
    expect(target.items.has("episode:a")).toBe(false);
    expect(target.items.has("episode:b")).toBe(true);
    seconds = 120;
    await runSync(items, options(target));
    expect(target.items.has("episode:a")).toBe(true);

    const more = [episode("c", 0.9, "failure"), episode("d", 0.9, "failure")];
    target.failNext(new SyncTargetError("bad token", "auth"));
    const auth = await runSync(more, options(target));
    expect(auth.status.state).toBe("disabled");
    expect(target.items.has("episode:d")).toBe(false);
    target.failNext(new SyncTargetError("property missing", "schema"));
    expect((await runSync(more, options(target))).status.state).toBe("paused");
    target.failNext(new SyncTargetError("too long", "validation"));
    const v = await runSync(more, options(target));
    // Refused for good: failed (never "skipped"), with a notice; the others go on.
    expect(v.sent).toMatchObject({ failed: 1, skipped: 0, created_or_updated: 1 });
    expect(v.notices.join("\n")).toContain("director sync retry --id c");
  });

  it("keeps queueing in local-only mode and drains in priority order on recovery", async () => {
    const target = new MemoryTarget();
    target.down = true;
    const r = await runSync(SIX, options(target));
    expect(r.mode).toBe("local-only");
    expect(r.depth.pending).toBe(3);
    expect(r.notices.join("\n")).toContain("local-only");
    target.down = false;
    const back = await runSync(SIX, options(target));
    expect(back.notices.join("\n")).toContain("healthy again");
    expect([...target.items.keys()]).toEqual(["episode:a", "episode:b", "episode:c"]);
  });

  it("after a crash between send and record, updates the remote item instead of creating it", async () => {
    const target = new MemoryTarget();
    const store = new QueueStore(dir, target.name);
    // The first run is cut short right after the target created the item.
    const crashing = {
      ...target,
      name: target.name,
      health: () => target.health(),
      ensureSchema: () => target.ensureSchema(),
      findByKey: target.findByKey.bind(target),
      upsert: async (item: Parameters<MemoryTarget["upsert"]>[0], id: string | null) => {
        await target.upsert(item, id);
        throw new Error("killed");
      },
    };
    await runSync([episode("a", 0.9, "failure")], { ...options(target), store, target: crashing });
    expect(target.creates).toBe(1);
    seconds = 3600;
    await runSync([episode("a", 0.9, "failure")], options(target));
    expect(target.creates).toBe(1);
    expect(target.updates).toBe(1);
  });
});
