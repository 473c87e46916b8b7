/** The values consolidation rules compare and merge: keys, ids, and what a core change may hold. */
import { describe, expect, it } from "vitest";
import {
  containsNull,
  episodeId,
  knowledgeId,
  knowledgeKey,
  mergeCoreValue,
} from "../../../src/core/versions/consolidate-values.js";
import type { SessionItem } from "../../../src/core/versions/items.js";

describe("consolidate values", () => {
  it("keys knowledge by its normalized text, or by its sealed bytes when it has no text", () => {
    expect(knowledgeKey("Keep  the CACHE warm", undefined)).toBe(
      knowledgeKey("keep the cache warm", undefined),
    );
    expect(knowledgeKey("keep the cache warm", undefined)).not.toBe(
      knowledgeKey("keep the cache cold", undefined),
    );
    const sealed = (ct: string) => [{ ct }] as never;
    expect(knowledgeKey(undefined, sealed("a"))).toBe("s:a");
    expect(knowledgeKey(undefined, sealed("a"))).not.toBe(knowledgeKey(undefined, sealed("b")));
    expect(knowledgeId(knowledgeKey("x", undefined))).toMatch(/^k_[0-9a-f]{16}$/);
  });

  it("gives an episode an id from its content, the same when replayed, not when changed", () => {
    const item: SessionItem = {
      seq: 3,
      kind: "episode",
      written_at: "2026-11-02T09:00:00.000Z",
      text: "migrated the flags",
      outcome: "success",
      confidence: 0.9,
      redactions: 0,
    };
    expect(episodeId("s1", item)).toMatch(/^ep_[0-9a-f]{16}$/);
    // written_at is not content: a replayed session gives the same ids.
    expect(episodeId("s1", { ...item, written_at: "2026-11-03T00:00:00.000Z" })).toBe(
      episodeId("s1", item),
    );
    expect(episodeId("s2", item)).not.toBe(episodeId("s1", item));
    expect(episodeId("s1", { ...item, outcome: "failure" })).not.toBe(episodeId("s1", item));
  });

  it("merges core values key by key and finds a null anywhere (a delete)", () => {
    expect(mergeCoreValue({ b: 1, a: { c: 2 } }, { a: { d: 3 } })).toEqual({
      a: { c: 2, d: 3 },
      b: 1,
    });
    expect(Object.keys(mergeCoreValue({ b: 1 }, { a: 1 }) as object)).toEqual(["a", "b"]);
    expect(mergeCoreValue([1, 2], [3])).toEqual([3]);
    expect(containsNull({ a: [1, { b: null }] })).toBe(true);
    expect(containsNull({ a: [1, { b: 0 }], c: "" })).toBe(false);
  });
});
