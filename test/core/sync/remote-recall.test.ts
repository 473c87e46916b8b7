import { describe, expect, it } from "vitest";
import { syncMetrics } from "../../../src/core/sync/metrics.js";
import {
  type CacheEntry,
  cacheKey,
  cacheVerdict,
  type RemoteHit,
  rankRemote,
  remoteMode,
  scoreByWords,
} from "../../../src/core/sync/remote-recall.js";

const hit = (id: string, score: number, key: string | null = null): RemoteHit => ({
  source: "notion",
  remote_id: id,
  kind: "episode",
  title: `title ${id}`,
  snippet: `title ${id}`,
  score,
  sync_key: key,
  local_id: null,
  url: null,
});

const entry: CacheEntry = {
  target: "notion",
  query: "deploy retry",
  tokens: ["deploy", "retry"],
  fetched_at: "2026-01-05T10:00:00.000Z",
  hits: [hit("p1", 1, "episode:ep_1")],
};

describe("hybrid recall policy", () => {
  it("maps a stated confidence to the seed's bands", () => {
    expect(remoteMode(undefined)).toBe("off");
    expect(remoteMode(0)).toBe("now");
    expect(remoteMode(0.49)).toBe("now");
    expect(remoteMode(0.5)).toBe("on_miss");
    expect(remoteMode(0.69)).toBe("on_miss");
    expect(remoteMode(0.7)).toBe("background");
    expect(remoteMode(1)).toBe("background");
  });

  it("keys the cache by target and the query's words, in any order", () => {
    expect(cacheKey("notion", "Retry, the deploy")).toBe(cacheKey("notion", "deploy retry"));
    expect(cacheKey("graphiti", "deploy retry")).not.toBe(cacheKey("notion", "deploy retry"));
  });

  it("keeps an answer fresh within the TTL unless a related item was synced after it", () => {
    const at = (s: number) => new Date(Date.parse(entry.fetched_at) + s * 1000).toISOString();
    expect(cacheVerdict(entry, at(10), 60, [])).toEqual({ fresh: true });
    expect(cacheVerdict(entry, at(60), 60, [])).toMatchObject({ fresh: false, reason: "expired" });
    // Unrelated, or synced before the fetch: still fresh.
    const unrelated = { key: "episode:ep_9", synced_at: at(5), text: "cache warmup" };
    const earlier = { key: "episode:ep_1", synced_at: at(-5), text: "deploy" };
    expect(cacheVerdict(entry, at(10), 60, [unrelated, earlier])).toEqual({ fresh: true });
    // One of its hits changed, or a new item shares a word with the query.
    const changed = { key: "episode:ep_1", synced_at: at(5), text: "" };
    const sharing = { key: "episode:ep_2", synced_at: at(5), text: "Retry storms" };
    for (const item of [changed, sharing]) {
      expect(cacheVerdict(entry, at(10), 60, [item])).toMatchObject({
        fresh: false,
        reason: "related_sync",
      });
    }
  });

  it("scores by the share of query words and ranks deterministically", () => {
    expect(scoreByWords("deploy retry", "Episode: retry the deploy")).toBe(1);
    expect(scoreByWords("deploy retry", "deployment")).toBe(0);
    expect(scoreByWords("deploy retry", "retry later")).toBe(0.5);
    const ranked = rankRemote([hit("b", 0.5), hit("a", 0.5), hit("c", 1)], 2);
    expect(ranked.map((h) => h.remote_id)).toEqual(["c", "a"]);
  });

  it("the extension hit rate leaves out recalls the store did not answer", () => {
    const m = syncMetrics(
      [
        { op: "recall", target: "notion", ok: true },
        { op: "recall", target: "notion", ok: false },
        { op: "recall", target: "notion", ok: false, error: "down" },
        { op: "recall", target: "graphiti", ok: true },
      ],
      "notion",
      null,
    );
    expect(m.extension_hit_rate).toBe(0.5);
  });
});
