import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { enqueue, markInflight, markSynced } from "../../src/core/sync/queue.js";
import { QueueStore } from "../../src/sync/queue-store.js";

const T0 = "2026-01-05T10:00:00.000Z";
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-queue-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const candidate = (id: string): SyncCandidate => ({
  item: {
    type: "insight",
    local_id: id,
    title: id,
    privacy: "public",
    occurred_at: T0,
    fields: {},
    content: id,
  },
  verdict: { sync: true, priority: 1, reasons: ["validated"] },
});

describe("queue store", () => {
  it("replays the journal over the snapshot, ignores a torn last line, and compacts idempotently", () => {
    const store = new QueueStore(dir, "t");
    let q = { ...enqueue(store.load(), [candidate("a"), candidate("b")], T0).queue, status: null };
    store.commit(q, ["insight:a", "insight:b"]);
    q = markInflight(q, "insight:a", T0);
    store.commit(q, ["insight:a"]);
    store.compact(q);
    q = markSynced(q, "insight:a", "r1", T0);
    store.commit(q, ["insight:a"]);
    // A crash mid-append leaves half a line.
    appendFileSync(join(dir, "t", "queue.journal.ndjson"), '{"records":{"insight:b":');
    const loaded = new QueueStore(dir, "t").load();
    expect(loaded.records["insight:a"]).toMatchObject({ state: "synced", remote_id: "r1" });
    expect(loaded.mapping["insight:a"]?.remote_id).toBe("r1");
    expect(loaded.records["insight:b"]?.state).toBe("pending");
    // The torn line was folded away, so later appends follow whole lines.
    expect(readFileSync(join(dir, "t", "queue.journal.ndjson"), "utf8")).toBe("");
    const again = new QueueStore(dir, "t");
    const reloaded = again.load();
    again.commit(reloaded, ["insight:b"]);
    expect(new QueueStore(dir, "t").load()).toEqual(reloaded);
  });
});
