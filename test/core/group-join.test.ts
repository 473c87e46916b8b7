/**
 * A group's record joined across compactions: what a group's events make when compacted in
 * consecutive parts and joined is what they make compacted at once, byte for byte, over
 * events drawn at random (notes of every kind said again across parts, decisions, links past
 * the cap, episodes past the cap, heartbeats whose gaps and stages cross the cut, errors
 * reported again under one id, sealed and sensitive notes).
 */
import { describe, expect, it } from "vitest";
import { collectGroup, packGroup } from "../../src/core/compaction/group.js";
import { joinGroups } from "../../src/core/compaction/group-join.js";
import type { CompactionPolicy } from "../../src/core/compaction/policy.js";
import { slicePolicy } from "../../src/core/compaction/room.js";
import { serializeEngram } from "../../src/core/model/engram.js";
import { defaultConfig } from "../../src/schema/config.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import { memoryEvent } from "./engine-fixtures.js";

/** mulberry32: a small seeded generator, so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS = ["fact", "lesson", "decision", "convention", "incident", "question"] as const;
const STAGES = ["plan", "build", "test", "blocked", "review"];

function events(seed: number, count: number): MemoryEvent[] {
  const r = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const out: MemoryEvent[] = [];
  let clock = Date.UTC(2026, 10, 22, 10, 0, 0);
  for (let seq = 1; seq <= count; seq++) {
    // Gaps of up to 20 minutes, so some workers stall; the receipt clock steps back at times.
    clock += Math.floor(r() * 1_200_000);
    const sentAt = new Date(clock).toISOString();
    const receivedAt = new Date(clock - (r() < 0.05 ? 3_600_000 : 0)).toISOString();
    const sender = { role: "worker" as const, id: `w${Math.floor(r() * 70)}` };
    const base = {
      sent_at: sentAt,
      received_at: receivedAt,
      sender,
      redactions: r() < 0.1 ? 1 : 0,
    };
    const roll = r();
    if (roll < 0.4) {
      out.push(
        memoryEvent(seq, {
          ...base,
          type: r() < 0.7 ? "heartbeat.v1" : "task_progress.v1",
          kind: r() < 0.7 ? "heartbeat" : "progress",
          text: undefined,
          ...(r() < 0.6 ? { stage: pick(STAGES) } : {}),
          ...(r() < 0.3 ? { duration_ms: Math.floor(r() * 90_000) } : {}),
        }),
      );
    } else if (roll < 0.55) {
      const id = r() < 0.7 ? `err-${Math.floor(r() * 6)}` : undefined;
      // A report of one error again is the same error: its type, flag and text.
      const n = id === undefined ? Math.floor(r() * 4) : Number(id.slice(4));
      out.push(
        memoryEvent(seq, {
          ...base,
          type: "worker_error.v1",
          kind: "error",
          error_type: `E${n % 3}`,
          ...(id !== undefined ? { error_id: id } : {}),
          ...(n % 2 === 0 ? { retryable: n % 4 === 0 } : {}),
          text: `failure ${n}`,
        }),
      );
    } else {
      const kind = pick(KINDS);
      const sensitive = r() < 0.05;
      const confident = r() < 0.6;
      out.push(
        memoryEvent(seq, {
          ...base,
          kind,
          // Said again across parts: the first one stays, where it was first said.
          text: `${kind} number ${Math.floor(r() * 40)}`,
          ...(kind === "decision" ? { rationale: `because ${Math.floor(r() * 5)}` } : {}),
          topics: [pick(["retries", "billing", "ci"]), pick(["a", "b"])],
          links: [{ type: "file", ref: `src/f${Math.floor(r() * 90)}.ts` }],
          privacy: sensitive ? "sensitive" : pick(["public", "private"] as const),
          ...(sensitive
            ? {
                text: undefined,
                sealed: [
                  { alg: "A256GCM", iv: "aXY=", ct: `Y3Q${seq}`, tag: "dGFn", field: "text" },
                ],
              }
            : {}),
          ...(confident ? { confidence: Math.round(r() * 100) / 100 } : {}),
          ...(confident && r() < 0.7 ? { outcome: pick(["success", "failure", "partial"]) } : {}),
          ...(r() < 0.3 ? { issue: `#${Math.floor(r() * 9)}` } : {}),
        } as Partial<MemoryEvent>),
      );
    }
  }
  return out;
}

const policy: CompactionPolicy = slicePolicy(
  { ...defaultConfig().memory, engram_max_bytes: 6_000 },
  undefined,
  undefined,
);

function packed(state: ReturnType<typeof collectGroup>): string[] {
  return packGroup(state, "20261122-100000Z", policy).map(serializeEngram);
}

describe("a group's record joined across compactions", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`makes what the events make at once, byte for byte (seed ${seed})`, () => {
      const all = events(seed, 400 + seed * 37);
      const whole = packed(collectGroup("issue #7", all, policy));
      const r = random(seed * 7919);
      const cuts = [
        ...new Set([
          0,
          ...Array.from({ length: 1 + (seed % 5) }, () => Math.floor(r() * all.length)),
          all.length,
        ]),
      ].sort((a, b) => a - b);
      const parts = cuts
        .slice(1)
        .map((end, i) => all.slice(cuts[i], end))
        .filter((p) => p.length > 0);
      expect(parts.length).toBeGreaterThan(1);
      const joined = packed(joinGroups(parts.map((p) => collectGroup("issue #7", p, policy))));
      expect(joined).toEqual(whole);
      // The data reaches what the caps are for: parts, episodes, links, stalls, errors.
      const state = collectGroup("issue #7", all, policy);
      expect(whole.length).toBeGreaterThan(1);
      expect(state.episodes.length).toBeGreaterThan(32);
      expect(state.links).toHaveLength(64);
      expect(state.telemetry.workers.some((w) => w.longest_gap_ms > 900_000)).toBe(true);
      expect(state.telemetry.errors.some((e) => e.ids.length > 0)).toBe(true);
      expect(state.sealed.length).toBeGreaterThan(0);
    });
  }

  it("joins a record of one part to itself", () => {
    const all = events(99, 50);
    const state = collectGroup("ci", all, policy);
    expect(joinGroups([state])).toBe(state);
  });
});
