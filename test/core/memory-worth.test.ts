/**
 * Memory worth loading: knowledge first in MEMORY.md, telemetry only where it matters and
 * within its share of the item budget, no engram of telemetry that says nothing, each
 * error_id counted once, and a promoted lesson recalled once.
 */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { planCycle } from "../../src/core/compaction/plan.js";
import { condenseTelemetry } from "../../src/core/compaction/telemetry.js";
import { emptyCatalog, sealEngram } from "../../src/core/model/engram.js";
import { buildRecallIndex, recall } from "../../src/core/recall/recall.js";
import { telemetryItemBudget } from "../../src/core/rendering/focus.js";
import { defaultConfig, type MemoryConfig } from "../../src/schema/config.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import { memoryNotes } from "../../src/worker/recall.js";
import { engramBody, memoryEvent } from "./engine-fixtures.js";

const policy = {
  engram_max_bytes: 16_384,
  stall_seconds: 600,
  promote_min_confidence: 0.6,
  max_groups: 24,
};

function memory(over: Partial<MemoryConfig> = {}): MemoryConfig {
  return { ...defaultConfig().memory, ...over };
}

/** A worker walking stages on an issue, one heartbeat a minute (`gapAt`: a long silence). */
function walk(worker: string, issue: string, from: number, gapAt = -1): MemoryEvent[] {
  const stages = ["review", "plan", "code", "test"];
  let t = 0;
  return stages.map((stage, i) => {
    t += i === gapAt ? 1200 : 60;
    const sentAt = new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + t * 1000).toISOString();
    return memoryEvent(from + i, {
      key: `id:hb-${worker}-${i}`,
      type: "heartbeat.v1",
      kind: "heartbeat",
      text: undefined,
      stage,
      issue,
      sent_at: sentAt,
      sender: { role: "worker", id: worker },
    });
  });
}

function lesson(seq: number, text: string, issue: string): MemoryEvent {
  return memoryEvent(seq, { kind: "lesson", text, issue, key: `id:n-${seq}` });
}

function section(text: string, heading: string): string[] {
  const start = text.indexOf(`${heading}\n`);
  if (start === -1) return [];
  const rest = text.slice(start + heading.length + 1);
  const end = rest.search(/\n## /);
  return (end === -1 ? rest : rest.slice(0, end)).split("\n").filter((l) => l.startsWith("- "));
}

describe("telemetry in compaction", () => {
  it("a slice of telemetry that says nothing makes no engram", () => {
    const quiet = [...walk("w1", "#1", 1), ...walk("w2", "#2", 10)];
    expect(compactSlice(quiet, policy)).toEqual([]);
  });

  it("quiet telemetry is counted in the engram of the knowledge beside it, not as facts", () => {
    const events = [lesson(1, "Pin the toolchain", "#5"), ...walk("w1", "#1", 2)];
    const engrams = compactSlice(events, policy);
    expect(engrams).toHaveLength(1);
    const [only] = engrams;
    expect(only?.provenance.event_count).toBe(events.length);
    expect(only?.telemetry?.workers.map((w) => w.worker)).toEqual(["w1"]);
    expect(only?.facts).toEqual(["Lesson: Pin the toolchain"]);
  });

  it("a stall says something: it is an engram of its own, with the stall as its fact", () => {
    const engrams = compactSlice(walk("w1", "#1", 1, 2), policy);
    expect(engrams).toHaveLength(1);
    expect(engrams[0]?.facts).toEqual([
      expect.stringMatching(
        /^Worker w1: stages review → plan → code → test over .*; stalled 20m 0s\.$/,
      ),
    ]);
  });

  it("a failure pattern says something; one transient error does not", () => {
    const error = (seq: number, errorId: string) =>
      memoryEvent(seq, {
        key: `err:w1:${errorId}-${seq}`,
        type: "worker_error.v1",
        kind: "error",
        text: "suite failed",
        error_type: "TestFailure",
        error_id: errorId,
        retryable: true,
      });
    expect(compactSlice([error(1, "e1")], policy)).toEqual([]);
    const repeated = compactSlice([error(1, "e1"), error(2, "e2")], policy);
    expect(repeated).toHaveLength(1);
    expect(repeated[0]?.telemetry?.errors).toMatchObject([{ error_type: "TestFailure", count: 2 }]);
  });

  it("counts one error_id once, however often it was reported", () => {
    const report = (seq: number) =>
      memoryEvent(seq, {
        key: `id:r-${seq}`,
        type: "worker_error.v1",
        kind: "error",
        text: "merge conflict",
        error_type: "MergeConflict",
        error_id: "err-1",
      });
    const t = condenseTelemetry([report(1), report(2), report(3)], 600);
    expect(t.errors).toMatchObject([{ error_type: "MergeConflict", count: 1 }]);
  });
});

describe("MEMORY.md is knowledge first", () => {
  it("the demo's Recent section holds lessons, not 'Worker X: stages ...' bullets", () => {
    // The demo: six workers walking stages and a few lessons, in a 12-item budget.
    const slice: MemoryEvent[] = [];
    let seq = 1;
    for (let w = 0; w < 6; w++) {
      slice.push(...walk(`worker-${w}`, `#${w + 1}`, seq, w === 0 ? 2 : -1));
      seq += 4;
    }
    for (let i = 0; i < 6; i++) slice.push(lesson(seq++, `Lesson number ${i} about tests`, "#9"));
    const plan = planCycle({
      slice,
      memory: memory({ memory_md_max_items: 12 }),
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      asOf: slice[slice.length - 1]?.received_at as string,
      now: Array.from({ length: 6 }, (_, i) => `worker-${i}: code, issue #${i + 1}`),
    });
    const text = plan.writes.find((w) => w.path === "MEMORY.md")?.text as string;
    const recent = section(text, "## Recent");
    expect(recent.length).toBe(6);
    expect(recent.every((l) => !l.startsWith("- Worker "))).toBe(true);
    const telemetry = [...section(text, "## Open problems"), ...section(text, "## Now")];
    expect(telemetry.length).toBeLessThanOrEqual(telemetryItemBudget(12));
    // The one stalled worker is the telemetry that matters.
    expect(section(text, "## Open problems")).toEqual([
      expect.stringMatching(/^- Worker worker-0: .*stalled 20m 0s\./),
    ]);
    expect(text).not.toMatch(/Worker worker-[1-5]:/);
  });
});

describe("recall of a promoted lesson", () => {
  const st = [1, 2, 3].map((i) =>
    sealEngram(
      engramBody({
        version: `2025010${i}-000000Z`,
        topics: ["ci"],
        facts: ["Lesson: cache the npm folder in CI"],
      }),
    ),
  );
  const lt = sealEngram(
    engramBody({
      scope: "lt",
      version: "20250104-000000Z",
      topics: ["ci"],
      facts: ["Lesson: cache the npm folder in CI"],
      supersedes: st.map((e) => e.engram_id),
    }),
  );
  const all = [...st, lt];
  const index = buildRecallIndex(memoryNotes(all));

  it("returns it once, as the LT engram", () => {
    const hits = recall(index, "cache npm in CI");
    expect(hits.map((h) => h.engram_id)).toEqual([lt.engram_id]);
  });

  it("shows the superseded ST engrams only when asked, naming what superseded them", () => {
    const hits = recall(index, "cache npm in CI", { includeSuperseded: true });
    expect(hits).toHaveLength(4);
    for (const hit of hits.filter((h) => h.scope === "st")) {
      expect(hit.superseded_by).toEqual([lt.engram_id]);
    }
  });
});
