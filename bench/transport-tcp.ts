/**
 * The TCP hub as a transport: `director serve` (the real command line, in a child process)
 * and N writers (in this process, `TcpBusClient`, pipelined sends) pushing envelopes; an
 * event counts once the hub has acknowledged it, i.e. once it is fsynced in the buffer.
 * Latency is send to acknowledgement, per event.
 *
 *   node dist/bench/transport-tcp.js        one run, the result as JSON on stdout
 *   BENCH_HUB_PROF=DIR ...                   the same, with a CPU profile of the hub in DIR
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { TcpBusClient } from "../src/bus/tcp-client.js";
import type { Envelope } from "../src/schema/envelope.js";
import { Rng } from "../test/support/random.js";
import { COMPONENTS } from "./fixtures.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import {
  DIRECTOR_CLI,
  log,
  percentile,
  removeDir,
  round,
  type TransportFigures,
  tempDir,
} from "./util.js";

export const TCP_TARGET_EVENTS_PER_S = 20_000;
export const TCP_TARGET_P99_MS = 50;

export type TcpTransportResult = TransportFigures;

export interface TcpTransportOptions {
  events?: number;
  writers?: number;
  /** Sends each writer keeps in flight. */
  window?: number;
}

/** Heartbeats, progress and notes from 50 workers, as a swarm sends them: ~250-450 bytes each. */
function generateEnvelopes(count: number, seed = 0x5eed_0007): Envelope[] {
  const rng = new Rng(seed);
  const out: Envelope[] = [];
  const base = Date.parse("2026-01-01T00:00:00.000Z");
  for (let i = 0; i < count; i++) {
    const worker = `worker-${rng.int(1, 50)}`;
    const component = rng.pickSkewed(COMPONENTS);
    const roll = rng.next();
    const envelope: Envelope = {
      schema_version: "agentbus-envelope/v1",
      message_type: "heartbeat.v1",
      sent_at: new Date(base + i * 10).toISOString(),
      sender: { role: "worker", id: worker },
      seq: 0,
      payload: {},
      event_id: `ev_bench_${seed.toString(16)}_${i}`,
    };
    if (roll < 0.6) {
      envelope.payload = {
        stage: rng.pick(["plan", "implement", "test", "review"]),
        issue: rng.int(1, 400),
        progress: round(rng.next(), 2),
        main_ancestor_sha: rng.hex(40),
        catalog_hash_seen: `sha256:${rng.hex(64)}`,
      };
    } else if (roll < 0.8) {
      envelope.message_type = "task_progress.v1";
      envelope.payload = {
        stage: rng.pick(["plan", "implement", "test", "review"]),
        status: rng.pick(["started", "running", "completed"]),
        issue: rng.int(1, 400),
        message: `working on ${component}: step ${rng.int(1, 20)} of the ${component} change`,
      };
    } else {
      envelope.message_type = "memory_note.v1";
      envelope.payload = {
        kind: rng.pick(["decision", "fact", "lesson", "convention"]),
        text: `${component} ${rng.pick(["must", "should", "does not"])} ${rng.pick(["retry", "cache", "validate", "batch"])} ${rng.pick(COMPONENTS)} calls; seen in #${rng.int(1, 400)} while testing ${rng.pick(COMPONENTS)}`,
        topics: [component, rng.pick(COMPONENTS)],
        links: [`#${rng.int(1, 400)}`, `src/${component}/index.ts`],
        privacy: rng.chance(0.3) ? "public" : "private",
      };
    }
    out.push(envelope);
  }
  return out;
}

/** `director serve` on a free loopback port, resolved with the address it listens on. */
export function startHub(repoDir: string): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_HUB_PROF
        ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_HUB_PROF}`]
        : []),
      DIRECTOR_CLI,
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--cycle-seconds",
      "0",
      "--repo",
      repoDir,
      "--json",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline !== -1) {
        const first = JSON.parse(out.slice(0, newline)) as { listening: string };
        resolve({ child, address: first.listening });
      }
    });
    child.once("exit", (code) => reject(new Error(`director serve exited with ${code}`)));
  });
}

/** Stops the hub (SIGTERM) and returns its summary, the last line of its output. */
async function stopHub(child: ChildProcess): Promise<{ acknowledged: number; commits: number }> {
  let out = "";
  child.stdout?.on("data", (chunk: string) => {
    out += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await exited;
  const last = out.trim().split("\n").pop() ?? "{}";
  return JSON.parse(last) as { acknowledged: number; commits: number };
}

export async function runTcpTransportScenario(
  options: TcpTransportOptions = {},
): Promise<TcpTransportResult> {
  const events = options.events ?? 100_000;
  const writers = options.writers ?? 8;
  const window = options.window ?? 32;
  const dir = tempDir("tcp");
  try {
    const repoDir = join(dir, "repo");
    const ctx = await initBenchRepo(repoDir, ROOMY_BUDGETS);
    const envelopes = generateEnvelopes(events);
    const { child, address } = await startHub(repoDir);
    log(`tcp: hub on ${address}; ${writers} writers, ${window} sends in flight each`);
    const [host, port] = [address.slice(0, address.lastIndexOf(":")), address.split(":").pop()];
    const latencies = new Float64Array(events);
    const clients = Array.from(
      { length: writers },
      (_, i) =>
        new TcpBusClient({
          host,
          port: Number(port),
          sender: { id: `bench-writer-${i}` },
          unreachableMs: 10_000,
        }),
    );
    await Promise.all(clients.map((c) => c.connect()));
    let next = 0;
    const t0 = performance.now();
    const writer = async (client: TcpBusClient): Promise<void> => {
      const lane = async (): Promise<void> => {
        while (next < events) {
          const i = next++;
          const sent = performance.now();
          await client.send([envelopes[i] as Envelope]);
          latencies[i] = performance.now() - sent;
        }
      };
      await Promise.all(Array.from({ length: window }, lane));
    };
    await Promise.all(clients.map(writer));
    const seconds = (performance.now() - t0) / 1000;
    await Promise.all(clients.map((c) => c.close()));
    const summary = await stopHub(child);
    const journal = readFileSync(ctx.paths.journal, "utf8");
    const stored = journal.length === 0 ? 0 : journal.split("\n").length - 1;
    const samples = Array.from(latencies);
    const result: TcpTransportResult = {
      events,
      writers,
      events_per_s: Math.round(events / seconds),
      p50_ms: round(percentile(samples, 50), 2),
      p99_ms: round(percentile(samples, 99), 2),
      target_events_per_s: TCP_TARGET_EVENTS_PER_S,
      pass: false,
    };
    result.pass =
      stored === events &&
      result.events_per_s >= TCP_TARGET_EVENTS_PER_S &&
      result.p99_ms < TCP_TARGET_P99_MS;
    log(
      `tcp: ${result.events_per_s} events/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms; ${stored} in the journal; ${summary.commits} group commits (${Math.round(summary.acknowledged / Math.max(1, summary.commits))} events each)`,
    );
    return result;
  } finally {
    removeDir(dir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runTcpTransportScenario();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
