/**
 * An engram's `provenance.senders` names the senders its content came from: a worker that
 * only sent heartbeats (folded into the engram as a quiet telemetry group) is not an author.
 */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import type { Engram } from "../../src/schema/engram.js";
import { memoryEvent } from "./engine-fixtures.js";

const policy = {
  engram_max_bytes: 16384,
  stall_seconds: 600,
  promote_min_confidence: 0.7,
  max_groups: 24,
};

const heartbeat = (seq: number, worker: string) =>
  memoryEvent(seq, {
    type: "heartbeat.v1",
    kind: "heartbeat",
    text: undefined,
    sender: { role: "worker", id: worker },
    stage: "code",
  });

describe("provenance.senders", () => {
  it("names the decision's sender, not a worker that only sent quiet heartbeats", () => {
    const events = [
      memoryEvent(1, {
        kind: "decision",
        text: "Use zod for every schema",
        rationale: "one validator",
        topics: ["schema"],
        sender: { role: "worker", id: "author" },
      }),
      heartbeat(2, "bystander"),
      heartbeat(3, "bystander"),
    ];
    const engrams = compactSlice(events, policy);
    const decision = engrams.find((e) => e.decisions.length > 0) as Engram;
    expect(decision.decisions[0]?.title).toBe("Use zod for every schema");
    expect(decision.provenance.senders).toEqual(["author"]);
    // Every event is still counted.
    expect(engrams.reduce((n, e) => n + e.provenance.event_count, 0)).toBe(3);
  });

  it("keeps a heartbeat sender whose telemetry became a fact (a stall)", () => {
    const events = [
      memoryEvent(1, {
        kind: "fact",
        text: "The hub acks after fsync",
        topics: ["bus"],
        sender: { role: "worker", id: "author" },
      }),
      memoryEvent(2, { ...heartbeat(2, "stuck"), topics: ["bus"] }),
      // Twenty minutes of silence: past stall_seconds, a notable worker.
      {
        ...heartbeat(3, "stuck"),
        topics: ["bus"],
        sent_at: "2026-11-22T10:30:00.000Z",
        received_at: "2026-11-22T10:30:00.000Z",
      },
    ];
    const [engram] = compactSlice(events, policy);
    expect(engram?.facts.some((f) => f.startsWith("Worker stuck:"))).toBe(true);
    expect(engram?.provenance.senders).toEqual(["author", "stuck"]);
  });
});
