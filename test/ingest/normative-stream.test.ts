/**
 * A swarm that follows the upstream bus specification to the letter is read, not quarantined:
 * a 3,000-event stream in its payload shapes through `director ingest`, and a worker that
 * sends only upstream heartbeats, whose stage, issue, drift and stalls the Director reports.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, jsonOf } from "../support/bins.js";
import { envelope, ndjson } from "../support/envelopes.js";
import { normativeStream, upstreamError, upstreamHeartbeat } from "../support/normative.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

interface IngestJson {
  accepted: number;
  duplicates: number;
  quarantined: number;
}

describe("a 3,000-event stream in the upstream payload shapes", () => {
  it("accepts every valid envelope once; only malformed and oversized lines are quarantined", async () => {
    const repo = dirs.repo("engram-normative-");
    jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
    const stream = normativeStream(3000, { seed: 11 });
    expect(stream.lines).toHaveLength(3000);
    expect(stream.duplicates).toBeGreaterThan(50);
    expect(stream.malformed).toBeGreaterThan(0);
    expect(stream.oversized).toBeGreaterThan(0);
    const file = join(repo.dir, "stream.ndjson");
    writeFileSync(file, ndjson(stream.lines));

    const counts = jsonOf<IngestJson>(
      await director(["ingest", file, "--json"], { cwd: repo.dir, timeoutMs: 120_000 }),
    );
    expect(counts).toMatchObject({
      accepted: stream.unique,
      duplicates: stream.duplicates,
      quarantined: stream.malformed + stream.oversized,
    });

    const status = jsonOf<{
      quarantine: { by_reason: Record<string, number> };
      swarm: {
        workers: { worker: string; stage: string | null; issue: string | null }[];
        errors: { count: number }[];
      };
    }>(await director(["status", "--json"], { cwd: repo.dir }));
    expect(status.quarantine.by_reason).toEqual({
      "malformed-json": stream.malformed,
      oversized: stream.oversized,
    });
    // Each repeated report of an error_id counts once.
    expect(status.swarm.errors.reduce((n, g) => n + g.count, 0)).toBe(stream.errorIds);
    // Stage and issue are read from the nested state.
    for (const w of status.swarm.workers) {
      const last = stream.lastState.get(w.worker);
      if (last === undefined) continue;
      expect(w.stage).not.toBeNull();
      expect(w.issue).toMatch(/^#\d+$/);
    }
    expect(status.swarm.workers.length).toBeGreaterThan(0);

    // Compaction counts each error_id once too.
    jsonOf(await director(["run", "--force", "--json"], { cwd: repo.dir, timeoutMs: 120_000 }));
    const again = jsonOf<IngestJson>(
      await director(["ingest", file, "--json"], { cwd: repo.dir, timeoutMs: 120_000 }),
    );
    expect(again.accepted).toBe(0);
  });
});

describe("a worker that sends only upstream heartbeats", () => {
  it("shows its stage, issue and drift in director status, and its stall in memory", async () => {
    const repo = dirs.repo("engram-normative-drift-");
    jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
    repo.writeConfig(
      "[memory]\nbuffer_keep_recent_events = 0\nstall_seconds = 60\n[policy.sync_main]\nmax_commits_behind = 1\nrequire_catalog_hash_match = false\n",
    );
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "engram init"]);
    const old = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    for (let i = 0; i < 3; i++) git(repo.dir, ["commit", "-q", "--allow-empty", "-m", `main ${i}`]);

    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, s)).toISOString();
    const beat = (seq: number, stage: string, s: number) =>
      upstreamHeartbeat(
        {
          stage,
          issue_number: 42,
          attempt: 2,
          progress: { step: "tests", percent: 40 },
          main_ancestor_sha: old,
          last_update_at: at(s),
        },
        { sender: "spec-worker", seq, sentAt: at(s), eventId: `hb-${seq}` },
      );
    // Then 10 minutes of silence before the next heartbeat: a stall.
    const lines = [beat(1, "CODE", 0), beat(2, "VALIDATE", 30), beat(3, "BLOCKED", 630)];
    const file = join(repo.dir, "beats.ndjson");
    writeFileSync(file, ndjson(lines));
    const counts = jsonOf<IngestJson>(
      await director(["ingest", file, "--json"], { cwd: repo.dir }),
    );
    expect(counts).toMatchObject({ accepted: 3, quarantined: 0 });

    const status = jsonOf<{
      swarm: {
        workers: {
          worker: string;
          stage: string;
          issue: string;
          progress: number;
          attempt: number;
          main_ancestor_sha: string;
          drift: { sync_required: boolean; reason: string; commits_behind: number } | null;
        }[];
      };
    }>(await director(["status", "--json"], { cwd: repo.dir }));
    expect(status.swarm.workers).toHaveLength(1);
    expect(status.swarm.workers[0]).toMatchObject({
      worker: "spec-worker",
      stage: "BLOCKED",
      issue: "#42",
      progress: 0.4,
      attempt: 2,
      main_ancestor_sha: old,
      drift: { sync_required: true, reason: "behind_main", commits_behind: 3 },
    });

    const snapshot = JSON.parse(
      (await director(["status", "--snapshot"], { cwd: repo.dir })).stdout,
    ) as { payload: Record<string, unknown> };
    expect(snapshot.payload).toMatchObject({
      workers: [
        {
          worker_id: "spec-worker",
          state: {
            stage: "BLOCKED",
            issue_number: 42,
            progress: { percent: 40 },
            repo: { main_ancestor_sha: old },
          },
          liveness: { live: expect.any(Boolean) },
        },
      ],
      queue: { eligible_issue_numbers: [], claimed_issue_numbers: expect.any(Array) },
    });

    jsonOf(await director(["run", "--force", "--json"], { cwd: repo.dir }));
    const memory = readFileSync(repo.path("MEMORY.md"), "utf8");
    expect(memory).toMatch(/## Open problems\n\n- Worker spec-worker: .*stalled 10m 0s; blocked\./);
  });

  it("keeps the flat fields as aliases: an old stream still reads", async () => {
    const repo = dirs.repo("engram-flat-");
    jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
    const file = join(repo.dir, "flat.ndjson");
    writeFileSync(
      file,
      ndjson([
        envelope("heartbeat.v1", { stage: "code", issue: "7", progress: 0.5 }, { eventId: "a" }),
        envelope("task_progress.v1", { stage: "test", status: "running" }, { eventId: "b" }),
        envelope("worker_error.v1", { error_type: "Boom", message: "it broke" }, { eventId: "c" }),
        upstreamError(
          { error_id: "e1", error_type: "Boom", message: "again" },
          { sender: "w1", eventId: "d" },
        ),
        // A known field of the wrong type is still refused.
        envelope("heartbeat.v1", { state: { issue_number: "seven" } }, { eventId: "e" }),
      ]),
    );
    const counts = jsonOf<IngestJson>(
      await director(["ingest", file, "--json"], { cwd: repo.dir }),
    );
    expect(counts).toMatchObject({ accepted: 4, quarantined: 1 });
    const status = jsonOf<{
      quarantine: { by_reason: Record<string, number> };
      swarm: { workers: { stage: string; issue: string }[]; errors: { count: number }[] };
    }>(await director(["status", "--json"], { cwd: repo.dir }));
    expect(status.quarantine.by_reason).toEqual({ "invalid-payload": 1 });
    expect(status.swarm.workers[0]).toMatchObject({ stage: "test", issue: "#7" });
    expect(status.swarm.errors).toMatchObject([{ error_type: "Boom", count: 2 }]);
  });
});
