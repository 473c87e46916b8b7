/**
 * Exactly once into a knowledge graph that behaves like Graphiti on a bad day, through the
 * `director sync run --target graphiti` bin: kill -9 while an `add_memory` is answered, a 503
 * after the episode was queued, a cut connection, `{"error": ...}` and `isError` tool results,
 * slow episodes listed only later. The kill points come from a seeded generator
 * (ENGRAM_CRASH_SEED to reproduce).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  director,
  spawnBin,
  succeeded,
  worker,
} from "../support/bins.js";
import { killWhen } from "../support/crash.js";
import { FakeGraphiti, type GraphitiFault } from "../support/fake-graphiti.js";
import { Rng } from "../support/random.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { episodeNote, SYNC_EPOCH } from "../support/sync-repo.js";

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_127);
const dirs = new TempDirs();
let server: FakeGraphiti | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

const env = (seconds: number) => ({ SOURCE_DATE_EPOCH: String(SYNC_EPOCH + seconds) });

interface RunJson {
  sent: { created_or_updated: number; failed: number; retry_later: number };
  depth: { pending: number; failed: number };
  stats: {
    processed: number;
    succeeded: number;
    failed: number;
    skipped: number;
    deferred: number;
  };
  notices: string[];
}

async function graphRepo(
  url: string,
  notes: readonly Record<string, unknown>[],
): Promise<TempRepo> {
  const repo = dirs.repo("engram-graph-once-");
  succeeded(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(
    [
      "[memory]",
      "buffer_keep_recent_events = 0",
      "[sync.graphiti]",
      `url = "${url}"`,
      "confirm_wait_seconds = 5",
      "timeout_seconds = 5",
      "",
    ].join("\n"),
  );
  const file = repo.write("notes.ndjson", `${notes.map((n) => JSON.stringify(n)).join("\n")}\n`);
  succeeded(await worker(["emit", "--from", file], { cwd: repo.dir, env: env(0) }));
  succeeded(await director(["run", "--force"], { cwd: repo.dir, env: env(0) }));
  return repo;
}

const parse = (r: BinResult): RunJson => JSON.parse(succeeded(r).stdout) as RunJson;

describe("sync is exactly once against a knowledge graph that fails after the write", () => {
  it("kill -9, 503 after the write, lost answers, {error} and isError results: each episode once", async () => {
    const rng = new Rng(SEED);
    onTestFailed(() => console.error(`graphiti exactly-once test: ENGRAM_CRASH_SEED=${SEED}`));
    const graph = new FakeGraphiti();
    server = graph;
    await graph.start();
    let now = SYNC_EPOCH * 1000;
    graph.clock = () => now;
    graph.visibilityLagMs = 30_000;
    const notes = Array.from({ length: 20 }, (_, i) =>
      episodeNote(`graph item ${i}`, 0.9, "failure"),
    );
    const repo = await graphRepo(graph.url, notes);
    const run = async (seconds: number) => {
      now = (SYNC_EPOCH + seconds) * 1000;
      const r = parse(
        await director(["sync", "run", "--target", "graphiti", "--json"], {
          cwd: repo.dir,
          env: env(seconds),
          timeoutMs: 120_000,
        }),
      );
      // Every item the run touched is counted once: a failure is never "skipped".
      expect(r.stats.processed).toBe(r.stats.succeeded + r.stats.failed + r.stats.deferred);
      expect(r.stats.skipped).toBe(0);
      return r;
    };

    // Killed while an add_memory is answered: the episode is queued (and slow to be listed).
    let holdAt = -1;
    graph.script = (call) =>
      call.tool === "add_memory" && call.adds + 1 === holdAt
        ? { kind: "hold", slow: true }
        : undefined;
    let killed = 0;
    for (let round = 0; round < 3; round++) {
      now = (SYNC_EPOCH + round) * 1000;
      holdAt = graph.calls.length + rng.int(1, 3);
      const spawned = spawnBin(DIRECTOR_BIN, ["sync", "run", "--target", "graphiti"], {
        cwd: repo.dir,
        env: env(round),
      });
      const target = holdAt;
      killWhen(spawned, () => graph.calls.length >= target, 0);
      if ((await spawned.done).signal === "SIGKILL") killed++;
    }
    expect(killed).toBeGreaterThan(0);

    // A run through errors after the write, and errors the server says in its results.
    // Faults between successes, so that no three come in a row (which ends a run).
    const faults: (GraphitiFault | undefined)[] = [
      { kind: "http", status: 503, afterWrite: true, slow: true },
      undefined,
      { kind: "error", message: "Graph database temporarily unavailable: deadlock detected" },
      undefined,
      { kind: "isError", message: "Error executing tool add_memory: connection pool exhausted" },
      undefined,
      { kind: "lost", slow: true },
      undefined,
      { kind: "http", status: 503 },
      undefined,
    ];
    let tool = 0;
    let outage = false;
    graph.script = (call) => {
      if (call.tool !== "add_memory") return undefined;
      const i = tool++;
      if (i < faults.length) return faults[i];
      // Then the server goes down, mid-run, right after carrying an add out.
      outage = true;
      graph.setDown(true);
      return { kind: "lost", slow: true };
    };
    const faulty = await run(10);
    expect(faulty.stats.failed).toBeGreaterThan(0);
    graph.script = undefined;
    graph.setDown(false);
    expect(outage).toBe(true);
    expect(graph.lostAnswers).toBeGreaterThanOrEqual(3);

    let seconds = 10;
    let last = faulty;
    for (let i = 0; i < 6 && (i === 0 || last.depth.pending > 0 || last.depth.failed > 0); i++) {
      seconds += 2000;
      last = await run(seconds);
    }
    const doubled = [...graph.copiesByRef()].filter(([, n]) => n > 1);
    const bodies = graph.episodes.map((e) => e.content);
    const missing = notes.map((n) => n.text).filter((t) => !bodies.includes(t));
    expect({ missing, doubled }).toEqual({ missing: [], doubled: [] });
    expect(bodies.filter((b) => b.startsWith("graph item")).sort()).toEqual(
      notes.map((n) => n.text).sort(),
    );
    expect(graph.earlyRequests).toBe(0);
  });
});
