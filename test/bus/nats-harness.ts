import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll } from "vitest";
import { type NatsServer, startNatsServer } from "../../bench/nats-server.js";
import type { NatsUrl } from "../../src/bus/nats-stream.js";
import { parseBusUrl } from "../../src/bus/url.js";
import type { Envelope } from "../../src/schema/envelope.js";
import { describeResult, director, jsonOf, worker } from "../support/bins.js";
import { NATS_INSTALL, natsRequired, natsServerBinary } from "../support/nats.js";
import { TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

export const dirs = new TempDirs();
let server: NatsServer;
let streams = 0;

/** The nats-server this test file started. */
export function natsServer(): NatsServer {
  return server;
}

/** How many streams this file has made (the newest is `T<n>`, subject prefix `t<n>`). */
export function streamCount(): number {
  return streams;
}

export const binary = natsServerBinary();
// Without the server the tests that need it are skipped (the run's end says so loudly),
// except on CI, where a missing server is a failure.
export const skipNats = binary === undefined && !natsRequired();

/** An initialized repository whose config names a stream of its own on the shared server. */
export async function natsRepo(extra: Record<string, number | string> = {}): Promise<{
  repo: TempRepo;
  stream: string;
  consumer: string;
}> {
  const repo = dirs.repo("engram-nats-");
  const r = await director(["init", "--json"], { cwd: repo.dir });
  if (r.code !== 0) throw new Error(describeResult(r));
  streams++;
  const stream = `T${streams}`;
  const consumer = "engram-director";
  repo.writeConfig(
    tomlConfig({
      "agent_bus.nats": {
        stream,
        subject_prefix: `t${streams}.events`,
        consumer,
        // A drain that takes longer than the ack wait to fsync and ack gets its messages
        // again (counted twice as acknowledged): on a loaded machine that can take seconds.
        // The tests of redelivery after a crash set 1 s themselves. Likewise a connect or a
        // publish that succeeds must not time out: the tests of these timeouts set them.
        ack_wait_seconds: 120,
        connect_timeout_seconds: 120,
        publish_timeout_seconds: 120,
        ...extra,
      },
    }),
  );
  return { repo, stream, consumer };
}

export function busUrl(): NatsUrl {
  return parseBusUrl(server.url) as NatsUrl;
}

export async function streamState(stream: string, consumer?: string) {
  const nc = await connect({ servers: `127.0.0.1:${server.port}` });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const c = consumer === undefined ? undefined : await jsm.consumers.info(stream, consumer);
    return {
      maxAgeSeconds: info.config.max_age / 1e9,
      duplicateWindowSeconds: (info.config.duplicate_window ?? 0) / 1e9,
      messages: info.state.messages,
      lastSeq: info.state.last_seq,
      pending: c?.num_pending,
      ackPending: c?.num_ack_pending,
    };
  } finally {
    await nc.close();
  }
}

/** The event keys of the journal, one entry per line (so a key stored twice shows twice). */
export function journalKeys(repo: TempRepo): string[] {
  const path = repo.path(".engram", "buffer", "journal.ndjson");
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  // A line torn by a kill has no newline yet: it was never durable, so it does not count.
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => (JSON.parse(line) as { key: string }).key);
}

/** `worker emit --bus nats://...` from the repository, its JSON result. */
export async function emitOverNats(repo: TempRepo, kind: string, text: string, workerId: string) {
  const args = ["emit", "--kind", kind, "--text", text, "--worker", workerId];
  return jsonOf<{ event_id: string; transport: string; spooled: boolean }>(
    await worker([...args, "--bus", server.url, "--json"], { cwd: repo.dir }),
  );
}

export function asEnvelope(e: Record<string, unknown>): Envelope {
  return e as unknown as Envelope;
}

/** A port nothing listens on: taken from the OS, then released. */
export async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Registers the shared set-up and clean-up in the calling test file. */
export function useNatsServer(): void {
  beforeAll(async () => {
    if (skipNats) return;
    if (binary === undefined) {
      throw new Error(`nats-server is not installed: ${NATS_INSTALL} (.ci/run does)`);
    }
    server = await startNatsServer(dirs.dir("engram-nats-store-"), binary);
  });
  afterAll(async () => {
    await server?.stop();
    dirs.cleanup();
  });
}
