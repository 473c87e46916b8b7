import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SyncCandidate, SyncItem } from "../../../src/core/sync/item.js";
import { itemHash, itemKey } from "../../../src/core/sync/item.js";
import {
  episodeVerdict,
  insightVerdict,
  OUTCOME_VALUES,
  patternVerdict,
  surpriseScore,
} from "../../../src/core/sync/policy.js";
import { privacyGate, sanitizedPreview } from "../../../src/core/sync/privacy.js";
import {
  applyRetention,
  DEFAULT_SCHEDULE,
  emptyQueue,
  enqueue,
  markFailed,
  markInflight,
  markSynced,
  planDue,
  setApproval,
} from "../../../src/core/sync/queue.js";
import { OUTCOMES } from "../../../src/schema/envelope.js";

const outcome = fc.constantFrom(...OUTCOMES);
const confidence = fc.double({ min: 0, max: 1, noNaN: true });

describe("episode policy", () => {
  it.each([
    [0.9, "failure", 1],
    [0.6, "success", 2],
    [0.1, "success", 2],
  ] as const)("syncs (%s, %s) with priority %s", (c, o, priority) => {
    expect(episodeVerdict({ confidence: c, outcome: o })).toMatchObject({ sync: true, priority });
  });

  it.each([
    [0.5, "partial"],
    [0.2, "abandoned"],
    [0.45, "partial"],
  ] as const)("skips (%s, %s)", (c, o) => {
    expect(episodeVerdict({ confidence: c, outcome: o }).sync).toBe(false);
  });

  it("follows the rules, not the seed's examples, at 0.9/success and 0.3/failure", () => {
    expect(episodeVerdict({ confidence: 0.9, outcome: "success" })).toMatchObject({ priority: 2 });
    expect(episodeVerdict({ confidence: 0.3, outcome: "failure" })).toMatchObject({ priority: 2 });
  });

  it("priority is 1 iff both conditions hold, 2 iff exactly one, skip iff none", () => {
    fc.assert(
      fc.property(confidence, outcome, (c, o) => {
        const s = surpriseScore(c, o);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
        expect(s).toBeCloseTo(Math.abs(c - OUTCOME_VALUES[o]), 8);
        const confident = c >= 0.7 && (o === "success" || o === "failure");
        const surprising = s >= 0.3;
        const v = episodeVerdict({ confidence: c, outcome: o });
        const expected = confident && surprising ? 1 : confident || surprising ? 2 : null;
        expect(v.priority).toBe(expected);
        expect(v.sync).toBe(expected !== null);
        // An explicit request always syncs.
        expect(episodeVerdict({ confidence: c, outcome: o }, undefined, true).sync).toBe(true);
      }),
    );
  });

  it("decides thresholds on decimal values, not binary rounding", () => {
    expect(surpriseScore(0.8, "partial")).toBe(0.3);
    expect(episodeVerdict({ confidence: 0.8, outcome: "partial" }).sync).toBe(true);
  });
});

describe("insight and pattern policy", () => {
  it("follows the table", () => {
    expect(
      insightVerdict({ confidence: 0.6, evidence_count: 3, status: "validated" }),
    ).toMatchObject({ priority: 1 });
    expect(insightVerdict({ confidence: 0.59, evidence_count: 9, status: "validated" }).sync).toBe(
      false,
    );
    expect(insightVerdict({ confidence: 0.8, evidence_count: 2, status: "pending" })).toMatchObject(
      {
        priority: 2,
      },
    );
    expect(insightVerdict({ confidence: 0.79, evidence_count: 5, status: "pending" }).sync).toBe(
      false,
    );
    expect(patternVerdict({ occurrences: 10, confidence: 0 })).toMatchObject({ priority: 1 });
    expect(patternVerdict({ occurrences: 5, confidence: 0.6 })).toMatchObject({ priority: 2 });
    expect(patternVerdict({ occurrences: 9, confidence: 0.59 }).sync).toBe(false);
    expect(patternVerdict({ occurrences: 4, confidence: 1 }).sync).toBe(false);
  });
});

describe("privacy", () => {
  it("private never leaves; sensitive only approved and encrypted", () => {
    for (const approval of ["none", "approved", "rejected"] as const) {
      expect(privacyGate("private", approval).allowed).toBe(false);
      expect(privacyGate("public", approval)).toEqual({ allowed: true, encrypt: false });
    }
    expect(privacyGate("sensitive", "none")).toEqual({
      allowed: false,
      reason: "awaiting_approval",
    });
    expect(privacyGate("sensitive", "rejected").allowed).toBe(false);
    expect(privacyGate("sensitive", "approved")).toEqual({ allowed: true, encrypt: true });
  });

  it("a preview shows no letter of the text", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (text) => {
        expect(sanitizedPreview(text).shape).toMatch(/^[* ]*$/);
      }),
    );
  });
});

const T0 = "2026-01-05T10:00:00.000Z";
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

function candidate(id: string, priority: 1 | 2, privacy: SyncItem["privacy"] = "public") {
  const item: SyncItem = {
    type: "episode",
    local_id: id,
    title: `Episode ${id}`,
    privacy,
    occurred_at: T0,
    fields: { confidence: 0.9 },
    content: `content of ${id}`,
  };
  return { item, verdict: { sync: true, priority, reasons: ["high surprise"] } } as SyncCandidate;
}

describe("queue", () => {
  it("never queues private items and re-queues only changed content", () => {
    const first = enqueue(emptyQueue(), [candidate("a", 1), candidate("b", 2, "private")], T0);
    expect(first.added).toEqual(["episode:a"]);
    expect(first.private).toBe(1);
    const again = enqueue(first.queue, [candidate("a", 1)], at(1));
    expect(again.added).toEqual([]);
    expect(again.updated).toEqual([]);
    const synced = markSynced(first.queue, "episode:a", "remote-a", at(2));
    const changed = candidate("a", 1);
    changed.item = { ...changed.item, content: "new" };
    const update = enqueue(synced, [changed], at(3));
    expect(update.updated).toEqual(["episode:a"]);
    expect(update.queue.records["episode:a"]).toMatchObject({
      state: "pending",
      remote_id: "remote-a",
      content_hash: itemHash(changed.item),
    });
    expect(itemKey(changed.item)).toBe("episode:a");
  });

  it("sends priority 1 at once and priority 2 in batches", () => {
    let q = enqueue(emptyQueue(), [candidate("p1", 1), candidate("p2", 2)], T0).queue;
    expect(planDue(q, DEFAULT_SCHEDULE, T0).due).toEqual(["episode:p1", "episode:p2"]);
    q = { ...q, last_batch_at: T0 };
    expect(planDue(q, DEFAULT_SCHEDULE, at(299)).due).toEqual(["episode:p1"]);
    expect(planDue(q, DEFAULT_SCHEDULE, at(300)).due).toEqual(["episode:p1", "episode:p2"]);
    expect(planDue(q, DEFAULT_SCHEDULE, at(1), true).due).toHaveLength(2);
  });

  it("retries after 1, 5 and 30 minutes, then fails; Retry-After wins when later", () => {
    let q = enqueue(emptyQueue(), [candidate("a", 1)], T0).queue;
    const error = { message: "HTTP 500", retryable: true };
    let now = T0;
    for (const delay of [60, 300, 1800]) {
      q = markFailed(markInflight(q, "episode:a", now), "episode:a", error, DEFAULT_SCHEDULE, now);
      expect(q.records["episode:a"]?.next_at).toBe(
        new Date(Date.parse(now) + delay * 1000).toISOString(),
      );
      expect(
        planDue(q, DEFAULT_SCHEDULE, at((Date.parse(now) - Date.parse(T0)) / 1000 + delay - 1)).due,
      ).toEqual([]);
      now = q.records["episode:a"]?.next_at as string;
      expect(planDue(q, DEFAULT_SCHEDULE, now).due).toEqual(["episode:a"]);
    }
    q = markFailed(q, "episode:a", error, DEFAULT_SCHEDULE, now);
    expect(q.records["episode:a"]).toMatchObject({ state: "failed", attempts: 4 });
    const limited = markFailed(
      enqueue(emptyQueue(), [candidate("b", 1)], T0).queue,
      "episode:b",
      { message: "429", retryable: true, retry_after_seconds: 120 },
      DEFAULT_SCHEDULE,
      T0,
    );
    expect(limited.records["episode:b"]?.next_at).toBe(at(120));
    const invalid = markFailed(
      enqueue(emptyQueue(), [candidate("c", 1)], T0).queue,
      "episode:c",
      { message: "validation_error", retryable: false },
      DEFAULT_SCHEDULE,
      T0,
    );
    expect(invalid.records["episode:c"]?.state).toBe("failed");
  });

  it("holds sensitive items until approved; approval survives a re-queue", () => {
    let q = enqueue(emptyQueue(), [candidate("s", 1, "sensitive")], T0).queue;
    expect(planDue(q, DEFAULT_SCHEDULE, T0)).toMatchObject({
      due: [],
      awaiting_approval: ["episode:s"],
    });
    q = setApproval(q, "episode:s", "approved");
    expect(planDue(q, DEFAULT_SCHEDULE, T0).due).toEqual(["episode:s"]);
    const changed = candidate("s", 1, "sensitive");
    changed.item = { ...changed.item, content: "other" };
    q = enqueue(q, [changed], at(5)).queue;
    expect(q.records["episode:s"]?.approval).toBe("approved");
  });

  it("removes synced records after 7 days and archives failed ones after 30, keeping the mapping", () => {
    let q = enqueue(emptyQueue(), [candidate("a", 1), candidate("b", 1)], T0).queue;
    q = markSynced(q, "episode:a", "r-a", T0);
    q = markFailed(
      markInflight(q, "episode:b", T0),
      "episode:b",
      { message: "x", retryable: false },
      DEFAULT_SCHEDULE,
      T0,
    );
    const week = applyRetention(q, DEFAULT_SCHEDULE, at(7 * 86_400 + 1));
    expect(week.removed).toEqual(["episode:a"]);
    expect(week.archived).toEqual([]);
    expect(week.queue.mapping["episode:a"]?.remote_id).toBe("r-a");
    const month = applyRetention(week.queue, DEFAULT_SCHEDULE, at(30 * 86_400 + 1));
    expect(month.archived.map((r) => r.key)).toEqual(["episode:b"]);
    // Removed from the queue but mapped: the same content is not queued again.
    expect(enqueue(month.queue, [candidate("a", 1)], at(40 * 86_400)).added).toEqual([]);
  });
});
