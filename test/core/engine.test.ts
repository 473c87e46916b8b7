import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { verifyMemory } from "../../src/core/checks/verify.js";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { tallyRecalls } from "../../src/core/compaction/decide.js";
import { planCycle } from "../../src/core/compaction/plan.js";
import { condenseTelemetry } from "../../src/core/compaction/telemetry.js";
import { normalizeClaim } from "../../src/core/graph/learnings.js";
import {
  emptyCatalog,
  engramHashOf,
  serializeCatalog,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { batchIdFromIso } from "../../src/core/model/time.js";
import { type Config, defaultConfig, type MemoryConfig } from "../../src/schema/config.js";
import type { Engram } from "../../src/schema/engram.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import { memoryEvent } from "./engine-fixtures.js";

const base: Config = defaultConfig();
const memory = (over: Partial<MemoryConfig> = {}): MemoryConfig => ({ ...base.memory, ...over });
const policy = {
  engram_max_bytes: 16384,
  stall_seconds: 600,
  promote_min_confidence: 0.7,
  max_groups: 24,
};

const KINDS = ["fact", "decision", "lesson", "convention", "incident", "question"] as const;
const arbEvent = fc.record({
  kind: fc.constantFrom(...KINDS, "heartbeat", "progress", "error"),
  text: fc.string({ minLength: 1, maxLength: 120 }),
  topic: fc.option(fc.constantFrom("auth", "ci", "db", "ui"), { nil: undefined }),
  issue: fc.option(fc.constantFrom("#1", "#2", "#3"), { nil: undefined }),
  stage: fc.constantFrom("plan", "code", "test"),
  worker: fc.constantFrom("w1", "w2", "w3"),
  gap: fc.integer({ min: 0, max: 900 }),
});
type ArbEvent = typeof arbEvent extends fc.Arbitrary<infer T> ? T : never;

function toEvents(specs: readonly ArbEvent[], start = 1): MemoryEvent[] {
  let t = Date.UTC(2026, 10, 22, 9, 0, 0);
  return specs.map((s, i) => {
    t += s.gap * 1000;
    const telemetry = s.kind === "heartbeat" || s.kind === "progress" || s.kind === "error";
    return memoryEvent(start + i, {
      key: `id:ev-${start + i}`,
      received_at: new Date(t).toISOString(),
      sent_at: new Date(t).toISOString(),
      type:
        s.kind === "heartbeat"
          ? "heartbeat.v1"
          : s.kind === "progress"
            ? "task_progress.v1"
            : s.kind === "error"
              ? "worker_error.v1"
              : "memory_note.v1",
      kind: s.kind,
      text: s.kind === "heartbeat" ? undefined : s.text,
      sender: { role: "worker", id: s.worker },
      topics: s.topic ? [s.topic] : [],
      ...(s.issue ? { issue: s.issue } : {}),
      ...(telemetry ? { stage: s.stage } : {}),
      ...(s.kind === "error"
        ? { error_type: `E${s.text.length % 3}`, retryable: s.gap % 2 === 0 }
        : {}),
    });
  });
}

function textsOf(engrams: readonly Engram[]): Set<string> {
  const out = new Set<string>();
  for (const e of engrams) {
    for (const f of e.facts) out.add(f);
    for (const d of e.decisions) out.add(d.title);
  }
  return out;
}

describe("compactSlice", () => {
  const LESSON_2 = {
    kind: "lesson",
    text: "",
    topic: undefined,
    issue: "#2",
    stage: "plan",
    worker: "w1",
    gap: 0,
  } as const;

  it("is deterministic, accounts for every event, keeps every note, and respects engram_max_bytes", () => {
    fc.assert(
      fc.property(
        fc.array(arbEvent, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1500, max: 20000 }),
        (specs, maxBytes) => {
          const events = toEvents(specs);
          const p = { ...policy, engram_max_bytes: maxBytes };
          const engrams = compactSlice(events, p);
          expect(compactSlice(events, p)).toEqual(engrams);
          // Every event is counted in an engram, unless the slice is telemetry that says
          // nothing (no note, stall or failure pattern): then it makes no engram at all.
          const counted = engrams.reduce((n, e) => n + e.provenance.event_count, 0);
          if (engrams.length === 0) {
            expect(events.every((e) => e.type !== "memory_note.v1")).toBe(true);
          } else {
            expect(counted).toBe(events.length);
          }
          for (const e of engrams) {
            expect(Buffer.byteLength(serializeEngram(e))).toBeLessThanOrEqual(maxBytes);
            expect(engramHashOf(e)).toBe(e.hash);
            expect(e.engram_id).toBe(`e_${e.hash.slice(7, 39)}`);
            expect(
              e.source_window.end_ts <= (events[events.length - 1]?.received_at as string),
            ).toBe(true);
            expect(e.version).toBe(
              batchIdFromIso(events[events.length - 1]?.received_at as string),
            );
          }
          const kept = [...textsOf(engrams)];
          const claims = new Set<string>();
          for (const e of events) {
            if (e.type !== "memory_note.v1" || e.text === undefined) continue;
            // Only an item larger than a whole engram is shortened.
            if (engrams.some((g) => g.signals.truncated > 0)) continue;
            // The first note of a claim is kept verbatim; a later one stating it again up to
            // case and spacing is that claim, kept once.
            const claim = normalizeClaim(e.text);
            if (!claims.has(claim))
              expect(kept.some((t) => t.includes(e.text as string))).toBe(true);
            expect(kept.some((t) => normalizeClaim(t).includes(claim))).toBe(true);
            claims.add(claim);
          }
        },
      ),
      {
        numRuns: 150,
        // Found by CI: two notes that differ only in case are one claim, kept once.
        examples: [[["P", "p"].map((text) => ({ ...LESSON_2, text })), 1500]],
      },
    );
  });

  it("groups by issue, then topic, and condenses telemetry instead of storing it verbatim", () => {
    const events = toEvents([
      {
        kind: "heartbeat",
        text: "x",
        topic: undefined,
        issue: "#1",
        stage: "plan",
        worker: "w1",
        gap: 0,
      },
      {
        kind: "heartbeat",
        text: "x",
        topic: undefined,
        issue: "#1",
        stage: "code",
        worker: "w1",
        gap: 60,
      },
      {
        kind: "heartbeat",
        text: "x",
        topic: undefined,
        issue: "#1",
        stage: "code",
        worker: "w1",
        gap: 900,
      },
      {
        kind: "error",
        text: "timeout",
        topic: undefined,
        issue: "#1",
        stage: "code",
        worker: "w1",
        gap: 2,
      },
      {
        kind: "error",
        text: "timeout",
        topic: undefined,
        issue: "#1",
        stage: "code",
        worker: "w2",
        gap: 2,
      },
      {
        kind: "lesson",
        text: "Retry flaky network calls",
        topic: "ci",
        issue: undefined,
        stage: "test",
        worker: "w2",
        gap: 1,
      },
    ]);
    const engrams = compactSlice(events, policy);
    expect(engrams.map((e) => e.topics[0]).sort()).toEqual(
      ["ci", "issue-#1"].map((t) => t.replace("#", "")).sort(),
    );
    const issue = engrams.find((e) => e.topics[0] === "issue-1") as Engram;
    expect(issue.links).toContainEqual({ type: "issue", ref: "#1" });
    expect(issue.telemetry?.workers[0]).toMatchObject({
      worker: "w1",
      heartbeats: 3,
      stages: ["plan", "code"],
      stalled: true,
    });
    expect(issue.telemetry?.errors[0]).toMatchObject({
      error_type: "E1",
      count: 2,
      workers: ["w1", "w2"],
    });
    expect(issue.facts.some((f) => f.startsWith("Worker w1: stages plan → code"))).toBe(true);
    expect(issue.provenance.event_count).toBe(5);
    const ci = engrams.find((e) => e.topics[0] === "ci") as Engram;
    expect(ci.facts).toEqual(["Lesson: Retry flaky network calls"]);
  });

  it("carries sealed text and never a sensitive note in clear", () => {
    const sealed = { alg: "A256GCM" as const, field: "text", iv: "aXY=", ct: "Y3Q=", tag: "dGFn" };
    const engrams = compactSlice(
      [memoryEvent(1, { privacy: "sensitive", text: undefined, sealed: [sealed] })],
      policy,
    );
    expect(engrams[0]?.privacy).toBe("sensitive");
    expect(engrams[0]?.sealed).toEqual([sealed]);
    expect(engrams[0]?.facts).toEqual([]);
  });

  it("summarises error groups with retryability", () => {
    const t = condenseTelemetry(
      [
        memoryEvent(1, { kind: "error", error_type: "Timeout", retryable: true, text: "slow" }),
        memoryEvent(2, { kind: "error", error_type: "Timeout", retryable: false, text: "slow" }),
        memoryEvent(3, {
          kind: "error",
          error_type: "TypeError",
          retryable: false,
          text: "x is undefined",
        }),
      ],
      600,
    );
    expect(t.errors).toEqual([
      { error_type: "Timeout", count: 2, retryable: null, sample: "slow", workers: ["w1"] },
      {
        error_type: "TypeError",
        count: 1,
        retryable: false,
        sample: "x is undefined",
        workers: ["w1"],
      },
    ]);
  });
});

function applyPlan(engrams: Map<string, Engram>, plan: ReturnType<typeof planCycle>) {
  for (const e of plan.written) engrams.set(e.engram_id, e);
  for (const e of plan.evicted) engrams.delete(e.engram_id);
  for (const id of [...engrams.keys()])
    if (!plan.catalog.entries.some((x) => x.engram_id === id)) engrams.delete(id);
  return plan.catalog;
}

describe("planCycle", () => {
  it("keeps every tier, engram and MEMORY.md within budget after every cycle, and the tree verifies", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(arbEvent, { minLength: 1, maxLength: 40 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.record({
          st_max_files: fc.integer({ min: 1, max: 6 }),
          lt_max_files: fc.integer({ min: 1, max: 3 }),
          st_max_total_bytes: fc.integer({ min: 20000, max: 60000 }),
          lt_max_total_bytes: fc.integer({ min: 20000, max: 40000 }),
          memory_md_max_bytes: fc.integer({ min: 1024, max: 4096 }),
          memory_md_max_items: fc.integer({ min: 1, max: 20 }),
          engram_max_bytes: fc.integer({ min: 4000, max: 16000 }),
        }),
        (slices, budgets) => {
          const m = memory({ ...budgets, promote_repeat_min: 2 });
          let catalog = emptyCatalog();
          const engrams = new Map<string, Engram>();
          let seq = 1;
          for (const specs of slices) {
            const slice = toEvents(specs, seq);
            seq += slice.length;
            const asOf = slice[slice.length - 1]?.received_at as string;
            const plan = planCycle({
              slice,
              catalog,
              engrams,
              recalls: new Map(),
              memory: m,
              asOf,
            });
            catalog = applyPlan(engrams, plan);
            const files = plan.catalog.entries.map((e) => ({
              path: e.path,
              text: serializeEngram(engrams.get(e.engram_id) as Engram),
            }));
            const focus = plan.writes.find((w) => w.path === "MEMORY.md")?.text;
            expect(
              verifyMemory({
                catalogText:
                  plan.writes.find((w) => w.path === "memory/catalog.json")?.text ??
                  serializeCatalog(catalog),
                files,
                memoryMd: focus,
                memory: m,
              }),
            ).toEqual([]);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("promotes a fact repeated across engrams once, naming what it supersedes", () => {
    const m = memory({ promote_repeat_min: 3, promote_decisions: false });
    let catalog = emptyCatalog();
    const engrams = new Map<string, Engram>();
    for (let round = 0; round < 4; round++) {
      const slice = [
        memoryEvent(round * 2 + 1, {
          kind: "lesson",
          text: "Pin the Node version in CI",
          topics: [`t${round}`],
          received_at: `2026-11-2${round}T10:00:00.000Z`,
        }),
        memoryEvent(round * 2 + 2, {
          kind: "fact",
          text: `unique ${round}`,
          topics: [`t${round}`],
          received_at: `2026-11-2${round}T10:00:01.000Z`,
        }),
      ];
      const plan = planCycle({
        slice,
        catalog,
        engrams,
        recalls: new Map(),
        memory: m,
        asOf: slice[1]?.received_at as string,
      });
      catalog = applyPlan(engrams, plan);
      if (round < 2) expect(plan.promoted).toEqual([]);
      if (round === 2) {
        expect(plan.promoted).toHaveLength(1);
        const lt = plan.promoted[0] as Engram;
        expect(lt.scope).toBe("lt");
        expect(lt.facts).toEqual(["Lesson: Pin the Node version in CI"]);
        expect(lt.supersedes).toHaveLength(3);
        expect(lt.promotion?.reasons[0]).toMatch(/repeated in 3 engrams/);
      }
      if (round === 3) expect(plan.promoted).toEqual([]);
    }
  });

  it("promotes decisions and recalled engrams", () => {
    const m = memory();
    const slice = [
      memoryEvent(1, { kind: "decision", text: "Use pnpm", rationale: "speed", topics: ["build"] }),
      memoryEvent(2, { kind: "fact", text: "The cache lives in ~/.cache", topics: ["cache"] }),
    ];
    const plan = planCycle({
      slice,
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory: m,
      asOf: slice[1]?.received_at as string,
    });
    expect(plan.promoted).toHaveLength(1);
    expect(plan.promoted[0]?.decisions).toEqual([{ title: "Use pnpm", rationale: "speed" }]);
    const engrams = new Map<string, Engram>();
    const catalog = applyPlan(engrams, plan);
    const cacheEngram = [...engrams.values()].find((e) => e.topics[0] === "cache") as Engram;
    const recalls = tallyRecalls(
      Array.from({ length: 5 }, (_, i) =>
        memoryEvent(10 + i, {
          type: "memory_event.v1",
          kind: "recall",
          hits: [cacheEngram.engram_id],
        }),
      ),
    );
    const next = planCycle({
      slice: [],
      catalog,
      engrams,
      recalls,
      memory: m,
      asOf: "2026-11-23T00:00:00.000Z",
    });
    expect(next.promoted).toHaveLength(1);
    expect(next.promoted[0]?.supersedes).toEqual([cacheEngram.engram_id]);
    expect(next.promoted[0]?.promotion?.reasons[0]).toMatch(/recalled 5 times/);
  });

  it("is a no-op replay: planning the same slice again writes no new engram", () => {
    const slice = toEvents([
      {
        kind: "fact",
        text: "a",
        topic: "db",
        issue: undefined,
        stage: "plan",
        worker: "w1",
        gap: 1,
      },
    ]);
    const first = planCycle({
      slice,
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory: memory(),
      asOf: slice[0]?.received_at as string,
    });
    const engrams = new Map<string, Engram>();
    const catalog = applyPlan(engrams, first);
    const again = planCycle({
      slice,
      catalog,
      engrams,
      recalls: new Map(),
      memory: memory(),
      asOf: slice[0]?.received_at as string,
    });
    expect(again.catalogChanged).toBe(false);
    expect(again.written).toEqual([]);
  });
});
