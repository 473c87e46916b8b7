import { describe, expect, it } from "vitest";
import { summarizeSwarm } from "../../src/core/swarm/swarm.js";
import { memoryEvent } from "./engine-fixtures.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, s)).toISOString();

describe("summarizeSwarm", () => {
  it("gives each worker's latest stage, liveness by receipt time, catalog drift and grouped errors", () => {
    const events = [
      memoryEvent(1, {
        kind: "heartbeat",
        type: "heartbeat.v1",
        received_at: at(0),
        stage: "plan",
        issue: "#7",
        sender: { role: "worker", id: "w2" },
        catalog_hash_seen: "sha256:old",
      }),
      memoryEvent(2, {
        kind: "heartbeat",
        type: "heartbeat.v1",
        received_at: at(50),
        stage: "test",
        progress: 0.5,
        sender: { role: "worker", id: "w2" },
        catalog_hash_seen: "sha256:now",
      }),
      memoryEvent(3, {
        kind: "error",
        type: "worker_error.v1",
        received_at: at(10),
        error_type: "Timeout",
        sender: { role: "worker", id: "w1" },
      }),
      memoryEvent(4, {
        kind: "error",
        type: "worker_error.v1",
        received_at: at(20),
        error_type: "Timeout",
        sender: { role: "worker", id: "w2" },
      }),
      memoryEvent(5, {
        kind: "heartbeat",
        type: "heartbeat.v1",
        received_at: at(5),
        sender: { role: "worker", id: "w1" },
        catalog_hash_seen: "sha256:old",
        sent_at: at(999),
      }),
      memoryEvent(6, {
        kind: "control",
        type: "sync_required.v1",
        received_at: at(55),
        sender: { role: "director", id: "d" },
      }),
    ];
    const view = summarizeSwarm(events, at(60), 30, "sha256:now");
    expect(view.workers.map((w) => w.worker)).toEqual(["w1", "w2"]);
    const [w1, w2] = view.workers;
    expect(w1).toMatchObject({
      live: false,
      age_seconds: 50,
      heartbeats: 1,
      errors: 1,
      catalog_mismatch: true,
    });
    expect(w2).toMatchObject({
      live: true,
      age_seconds: 10,
      stage: "test",
      issue: "#7",
      progress: 0.5,
      heartbeats: 2,
      catalog_mismatch: false,
    });
    expect(view.errors).toEqual([
      { error_type: "Timeout", count: 2, workers: ["w1", "w2"], last_seen: at(20) },
    ]);
  });
});
