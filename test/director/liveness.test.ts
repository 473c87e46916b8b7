/**
 * `director run --flush` compacts the buffer, heartbeats with it: the workers' last sightings
 * are kept in the state folder, so `director status` still tells a live worker from a silent
 * one afterwards, and a malformed record (the state folder may come from anyone) is noted,
 * not trusted.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { foldSightings, parseLiveness } from "../../src/core/swarm/liveness.js";
import { assertBuilt, DIRECTOR_BIN, jsonOf, runBin, WORKER_BIN } from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let repo: TempRepo;
afterAll(() => dirs.cleanup());

const T = 1_800_000_000;
const at = (seconds: number) => ({ SOURCE_DATE_EPOCH: String(seconds) });
const director = (args: string[], epoch: number) =>
  runBin(DIRECTOR_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir, env: at(epoch) });
const worker = (args: string[], epoch: number) =>
  runBin(WORKER_BIN, [...args, "--repo", repo.dir], { cwd: repo.dir, env: at(epoch) });

interface StatusJson {
  buffer: { events: number };
  swarm: {
    workers: {
      worker: string;
      live: boolean;
      age_seconds: number;
      stage: string | null;
      issue: string | null;
    }[];
    liveness_problems: string[];
  };
}
interface Snapshot {
  payload: {
    workers: {
      worker_id: string;
      state: { stage?: string; issue_number?: number };
      liveness: { live: boolean; last_heartbeat_age_seconds: number };
    }[];
    queue: { claimed_issue_numbers: number[] };
  };
}

describe("worker liveness across a compaction", () => {
  beforeAll(async () => {
    assertBuilt();
    repo = dirs.repo();
    expect((await director(["init"], T)).code).toBe(0);
  });

  it("keeps a worker live in status and the snapshot after director run --flush", async () => {
    const beat = await worker(["heartbeat", "--stage", "test", "--issue", "7", "--json"], T);
    expect(beat.code).toBe(0);
    expect((await director(["run", "--flush", "--json"], T)).code).toBe(0);

    const status = jsonOf<StatusJson>(await director(["status", "--json"], T + 1));
    expect(status.buffer.events).toBe(0);
    expect(status.swarm.workers).toHaveLength(1);
    expect(status.swarm.workers[0]).toMatchObject({
      live: true,
      age_seconds: 1,
      stage: "test",
      issue: "#7",
    });
    const text = (await director(["status"], T + 1)).stdout;
    expect(text).toMatch(/: live, last seen 1 s ago, stage test, issue #7/);

    const snap = jsonOf<Snapshot>(await director(["status", "--snapshot"], T + 1));
    expect(snap.payload.workers).toHaveLength(1);
    expect(snap.payload.workers[0]).toMatchObject({
      state: { stage: "test", issue_number: 7 },
      liveness: { live: true, last_heartbeat_age_seconds: 1 },
    });
    expect(snap.payload.queue.claimed_issue_numbers).toEqual([7]);

    // Past the heartbeat TTL it is silent, not gone.
    const later = jsonOf<StatusJson>(await director(["status", "--json"], T + 3600));
    expect(later.swarm.workers[0]).toMatchObject({ live: false, age_seconds: 3600 });

    const record = join(repo.dir, ".engram", "buffer", "liveness.json");
    expect(statSync(record).mode & 0o777).toBe(0o600);
  });

  it("notes a malformed record and leaves its bad entries out", async () => {
    const record = join(repo.dir, ".engram", "buffer", "liveness.json");
    const good = JSON.parse(readFileSync(record, "utf8"));
    good.workers.push({ worker: "x".repeat(10_000), last_seen: "yesterday" });
    writeFileSync(record, JSON.stringify(good));
    const status = jsonOf<StatusJson>(await director(["status", "--json"], T + 1));
    expect(status.swarm.workers).toHaveLength(1);
    expect(status.swarm.liveness_problems[0]).toMatch(/liveness\.json: workers\[1\]/);
    writeFileSync(record, " ".repeat(3 * 1024 * 1024));
    expect((await director(["status"], T + 1)).stdout).toMatch(/note: .*not read; delete it/);
    writeFileSync(record, "{not json");
    const broken = await director(["status"], T + 1);
    expect(broken.code).toBe(0);
    expect(broken.stdout).toMatch(/note: .*liveness\.json: not JSON/);
  });
});

describe("foldSightings", () => {
  const ev = (id: string, at: string, stage?: string) =>
    ({
      sender: { role: "worker", id },
      received_at: at,
      kind: "heartbeat",
      ...(stage ? { stage } : {}),
    }) as never;
  it("is idempotent, keeps the newest word, and stays bounded", () => {
    const once = foldSightings({ version: 1, workers: [] }, [
      ev("a", "2027-01-01T00:00:02Z", "new"),
      ev("a", "2027-01-01T00:00:01Z", "old"),
    ]);
    expect(once.workers[0]).toMatchObject({ last_seen: "2027-01-01T00:00:02Z", stage: "new" });
    expect(foldSightings(once, [ev("a", "2027-01-01T00:00:02Z", "new")])).toEqual(once);
    const many = Array.from({ length: 1005 }, (_, i) =>
      ev(
        `w${i}`,
        `2027-01-01T00:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}Z`,
      ),
    );
    const bounded = foldSightings(once, many);
    expect(bounded.workers).toHaveLength(1000);
    expect(parseLiveness(JSON.parse(JSON.stringify(bounded))).problems).toEqual([]);
  });
});
