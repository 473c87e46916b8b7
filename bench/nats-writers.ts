/**
 * Worker-thread entry of the NATS transport benchmark: many writers, each with a connection
 * of its own and the real `BusSender`, publishing `memory_note.v1` envelopes in batches with
 * pipelined acks. Runs in a thread so the writers do not share an event loop with the
 * Director's drain. Reports when each envelope's publish started (absolute ms).
 */
import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";
import { openNatsSender } from "../src/bus/nats.js";
import type { NatsUrl } from "../src/bus/nats-stream.js";
import type { BusSender } from "../src/bus/sender.js";
import { openContext } from "../src/context/repo-context.js";
import type { Envelope } from "../src/schema/envelope.js";
import { buildEnvelope } from "../src/worker/envelope.js";

export interface WritersJob {
  url: NatsUrl;
  repoDir: string;
  writers: number;
  perWriter: number;
  batch: number;
  /** Offered load in events/s for all writers together; 0 for as fast as they can. */
  rate: number;
  phase: string;
}

export interface WritersReport {
  ids: string[];
  /**
   * When the send of `ids[i]` started (flat out) or was due (paced), in ms since the epoch
   * with sub-ms precision.
   */
  startedAt: Float64Array;
  stored: number;
  spooled: number;
}

const TOPICS = ["auth", "ci", "db", "deploy", "api", "cache"];

function now(): number {
  return performance.timeOrigin + performance.now();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function run(job: WritersJob): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("nats-writers runs as a worker thread");
  const ctx = await openContext({ repo: job.repoDir });
  const senders: BusSender[] = [];
  for (let w = 0; w < job.writers; w++) senders.push(await openNatsSender(ctx, job.url));

  // The envelopes are built (and validated, as `worker emit` does) before the clock starts:
  // the run measures the transport, not envelope construction.
  const total = job.writers * job.perWriter;
  const ids: string[] = new Array(total);
  const startedAt = new Float64Array(total);
  const batches: Envelope[][][] = [];
  for (const [w] of senders.entries()) {
    const out: Envelope[][] = [];
    for (let start = 0; start < job.perWriter; start += job.batch) {
      const batch: Envelope[] = [];
      for (let i = start; i < Math.min(start + job.batch, job.perWriter); i++) {
        const n = w * job.perWriter + i;
        const topic = TOPICS[n % TOPICS.length] as string;
        const envelope = await buildEnvelope(
          "memory_note.v1",
          {
            kind: "fact",
            text: `writer ${w} event ${i}: the ${topic} cache is warmed before the integration suite runs`,
            topics: [topic],
            links: [],
          },
          { id: `bench-${job.phase}-w${w}` },
          new Date().toISOString(),
          i,
        );
        ids[n] = envelope.event_id;
        batch.push(envelope);
      }
      out.push(batch);
    }
    batches.push(out);
  }
  port.postMessage({ type: "ready" });
  await new Promise<void>((resolve) => port.once("message", () => resolve()));

  let stored = 0;
  let spooled = 0;
  const t0 = now();
  // Paced writers send one batch each `interval` ms, all writers together offering `rate`/s.
  const interval = job.rate > 0 ? (job.writers * job.batch * 1000) / job.rate : 0;
  await Promise.all(
    senders.map(async (sender, w) => {
      const mine = batches[w] as Envelope[][];
      for (let round = 0; round < mine.length; round++) {
        // Paced: latency counts from when the send was due, so a writer that falls behind
        // (a saturated machine) shows as latency instead of quietly offering less.
        let at = now();
        if (interval > 0) {
          // Writers are spread over the interval, so the load is even rather than bursty.
          const due = t0 + (round + w / job.writers) * interval;
          if (due > at) await sleep(due - at);
          at = due;
        }
        const batch = mine[round] as Envelope[];
        for (let i = 0; i < batch.length; i++) {
          startedAt[w * job.perWriter + round * job.batch + i] = at;
        }
        const delivery = await sender.send(batch);
        if (delivery.spooled) spooled += batch.length;
        else stored += batch.length;
      }
    }),
  );
  await Promise.all(senders.map((s) => s.close()));
  const report: WritersReport = { ids, startedAt, stored, spooled };
  port.postMessage({ type: "done", report });
}

if (parentPort) {
  run(workerData as WritersJob).catch((err: unknown) => {
    parentPort?.postMessage({ type: "error", message: (err as Error).stack ?? String(err) });
  });
}
