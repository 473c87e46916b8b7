/**
 * The NATS JetStream transport against a real nats-server (started here on 127.0.0.1 with a
 * port of its own choosing and a temporary store): dedup by event id, the CLI end to end,
 * the spool fallback, ack-after-fsync, and 50 concurrent writers with the Director's drain
 * killed in the middle.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { startNatsServer } from "../../bench/nats-server.js";
import { messageIdOf, openNatsSender, packMessages } from "../../src/bus/nats.js";
import type { NatsUrl } from "../../src/bus/nats-stream.js";
import type { Delivery } from "../../src/bus/sender.js";
import { parseBusUrl } from "../../src/bus/url.js";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { EXIT } from "../../src/errors.js";
import type { Envelope } from "../../src/schema/envelope.js";
import { describeResult, director, jsonOf, worker } from "../support/bins.js";
import { note } from "../support/envelopes.js";
import { waitUntil } from "../support/wait.js";
import {
  asEnvelope,
  busUrl,
  deadPort,
  dirs,
  journalKeys,
  natsRepo,
  natsServer,
  skipNats,
  streamCount,
  streamState,
  useNatsServer,
} from "./nats-harness.js";

useNatsServer();

describe("packing a send into NATS messages", () => {
  const envelopes = Array.from({ length: 7 }, (_, i) =>
    asEnvelope(note("fact", `packed ${i}`, { eventId: `ev-p${i}`, sender: "w1" })),
  );
  const lineBytes = envelopes.map((e) => Buffer.byteLength(JSON.stringify(e)) + 1);

  it("keeps the envelopes in order, one per line, as many per message as fit the limit", () => {
    const subject = (e: Envelope) => `s.${e.sender.id}`;
    expect(packMessages(envelopes, 1024 * 1024, subject)).toHaveLength(1);
    const limit = (lineBytes[0] as number) * 3;
    const messages = packMessages(envelopes, limit, subject);
    expect(messages.map((m) => m.envelopes.length)).toEqual([3, 3, 1]);
    for (const m of messages) {
      expect(Buffer.byteLength(m.data)).toBeLessThanOrEqual(limit);
      expect(m.data.split("\n").map((line) => JSON.parse(line))).toEqual(m.envelopes);
    }
    expect(messages.flatMap((m) => m.envelopes)).toEqual(envelopes);
    expect(messages.map((m) => m.subject)).toEqual(["s.w1", "s.w1", "s.w1"]);
    // An envelope larger than the limit goes alone (and the server refuses it).
    expect(packMessages(envelopes.slice(0, 2), 10, subject).map((m) => m.envelopes.length)).toEqual(
      [1, 1],
    );
  });

  it("never puts two workers' envelopes in one message: each goes to its own subject", () => {
    const other = asEnvelope(note("fact", "other", { eventId: "ev-o", sender: "w2" }));
    const [a, b] = envelopes as [Envelope, Envelope];
    const messages = packMessages([a, b, other, a], 1024 * 1024, (e) => `s.${e.sender.id}`);
    expect(messages.map((m) => [m.subject, m.envelopes.length])).toEqual([
      ["s.w1", 2],
      ["s.w2", 1],
      ["s.w1", 1],
    ]);
  });

  it("keys a message by its lone event id, or a digest of its event ids in order", () => {
    const [a, b] = envelopes as [Envelope, Envelope];
    expect(messageIdOf([a])).toBe("ev-p0");
    expect(messageIdOf([a, b])).toMatch(/^batch-[0-9a-f]{64}$/);
    expect(messageIdOf([a, b])).toBe(messageIdOf([{ ...a }, { ...b }]));
    expect(messageIdOf([b, a])).not.toBe(messageIdOf([a, b]));
    const anonymous = { ...b };
    delete anonymous.event_id;
    expect(messageIdOf([a, anonymous])).toBeUndefined();
    expect(messageIdOf([anonymous])).toBeUndefined();
  });
});

describe.skipIf(skipNats)("NATS JetStream sender", () => {
  it("publishes a send as one message keyed by its event ids, so a resend inside the window is stored once", async () => {
    const { repo, stream } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const a = asEnvelope(note("fact", "alpha", { eventId: "ev-a", sender: "w1" }));
    const b = asEnvelope(note("fact", "beta", { eventId: "ev-b", sender: "w1" }));
    const c = asEnvelope(note("fact", "gamma", { eventId: "ev-c", sender: "w1" }));
    const sender = await openNatsSender(ctx, busUrl());
    try {
      expect(await sender.send([a, b])).toEqual({ transport: "nats", spooled: false });
      // The same send again (a worker that retries after a lost ack): acknowledged, not stored.
      expect(await sender.send([a, b])).toEqual({ transport: "nats", spooled: false });
      // A lone envelope is keyed by its own event id.
      expect(await sender.send([c])).toEqual({ transport: "nats", spooled: false });
      expect(await sender.send([c])).toEqual({ transport: "nats", spooled: false });
    } finally {
      await sender.close();
    }
    expect(await streamState(stream)).toMatchObject({
      messages: 2,
      lastSeq: 2,
      maxAgeSeconds: 7 * 86_400,
      duplicateWindowSeconds: 120,
    });
    const nc = await connect({ servers: `127.0.0.1:${natsServer().port}` });
    try {
      const jsm = await jetstreamManager(nc);
      const first = await jsm.streams.getMessage(stream, { seq: 1 });
      // The worker's subject, the envelopes as NDJSON, the digest of their ids as key.
      expect(first?.subject).toBe(`t${streamCount()}.events.w1`);
      const lines = first?.string().split("\n") ?? [];
      expect(lines.map((line) => (JSON.parse(line) as Envelope).event_id)).toEqual([
        "ev-a",
        "ev-b",
      ]);
      expect(first?.header.get("Nats-Msg-Id")).toBe(messageIdOf([a, b]));
      const second = await jsm.streams.getMessage(stream, { seq: 2 });
      expect(second?.header.get("Nats-Msg-Id")).toBe("ev-c");
    } finally {
      await nc.close();
    }
    expect(existsSync(ctx.paths.spool) ? readdirSync(ctx.paths.spool) : []).toEqual([]);
  });

  it("falls back to the local spool when no server listens: exit 0, spooled, with the reason", async () => {
    const { repo } = await natsRepo({ connect_timeout_seconds: 1 });
    const port = await deadPort();
    const r = await worker(
      ["emit", "--kind", "fact", "--text", "kept while NATS is down", "--worker", "w1"].concat([
        "--bus",
        `nats://127.0.0.1:${port}`,
        "--json",
      ]),
      { cwd: repo.dir },
    );
    const out = jsonOf<{
      spooled: boolean;
      transport: string;
      fallback_reason: string;
      path: string;
    }>(r);
    expect(out).toMatchObject({ spooled: true, transport: "nats" });
    expect(out.fallback_reason).toContain(`nats://127.0.0.1:${port}: cannot connect`);
    expect(readFileSync(out.path, "utf8")).toContain("kept while NATS is down");
    const text = await worker(
      ["emit", "--kind", "fact", "--text", "also kept", "--worker", "w1", "--bus"].concat([
        `nats://127.0.0.1:${port}`,
      ]),
      { cwd: repo.dir },
    );
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^spooled ev_\\w+ \\(nats unavailable: nats://127\\.0\\.0\\.1:${port}: cannot connect`,
      ),
    );
    // The Director drains the spool as usual.
    const run = jsonOf<{ drained: { accepted: number } }>(
      await director(["run", "--json"], { cwd: repo.dir }),
    );
    expect(run.drained.accepted).toBe(2);
    // The Director cannot drain a server that is down: exit 69 (an external service), naming it.
    const drain = await director(["ingest", "--bus", `nats://127.0.0.1:${port}`], {
      cwd: repo.dir,
    });
    expect(drain.code, describeResult(drain)).toBe(EXIT.unavailable);
    expect(drain.stderr).toContain(`nats://127.0.0.1:${port}: cannot connect`);
  });
  it("spools a batch JetStream does not acknowledge in time; stored there too, it is ingested once", async () => {
    const { repo, stream } = await natsRepo();
    const ready = asEnvelope(
      note("fact", "before the stall", { eventId: "ev-ready", sender: "w1" }),
    );
    // Acknowledged within the test repositories' 120 s publish timeout, however loaded the machine.
    const before = await openNatsSender(await openContext({ repo: repo.dir }), busUrl());
    expect(await before.send([ready])).toMatchObject({ spooled: false });
    await before.close();
    // Then a 1 s timeout: the paused server, not the machine's speed, is what it runs out on.
    const config = readFileSync(repo.path("config", "dev.toml"), "utf8");
    repo.writeConfig(
      config.replace(/^publish_timeout_seconds = .*$/m, "publish_timeout_seconds = 1"),
    );
    const ctx = await openContext({ repo: repo.dir });
    expect(ctx.config.agent_bus.nats.publish_timeout_seconds).toBe(1);
    const sender = await openNatsSender(ctx, busUrl());
    const stalled = asEnvelope(
      note("fact", "during the stall", { eventId: "ev-stall", sender: "w1" }),
    );
    // The server stops answering (its process is paused): the publish is left unacknowledged.
    process.kill(natsServer().pid as number, "SIGSTOP");
    // The signal is asynchronous: publish only once the server has really stopped.
    await stopped(natsServer().pid as number);
    let delivery: Delivery;
    try {
      delivery = await sender.send([stalled]);
    } finally {
      process.kill(natsServer().pid as number, "SIGCONT");
    }
    await sender.close();
    expect(delivery).toMatchObject({ transport: "nats", spooled: true });
    expect(delivery.fallback_reason).toContain("no ack within 1000 ms");
    // Resumed, the server stores what it had received: the event is now in the spool AND in
    // JetStream. director run drains both; the buffer keeps it once.
    await waitUntil(
      async () => (await streamState(stream)).messages === 2,
      "the resumed server to store the stalled publish",
    );
    repo.writeConfig(`[agent_bus]\nsources = ["${natsServer().url}"]\n\n${config}`);
    const run = jsonOf<{
      drained: { accepted: number };
      sources: { accepted: number; duplicates: number }[];
    }>(await director(["run", "--json"], { cwd: repo.dir }));
    expect(run.drained.accepted).toBe(1);
    expect(run.sources[0]).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(journalKeys(repo).sort()).toEqual([eventIdKey("ev-ready"), eventIdKey("ev-stall")]);
  });

  it("spools what a server without JetStream cannot store, and says why", async () => {
    const { repo } = await natsRepo();
    const plain = await startNatsServer(dirs.dir("engram-nats-plain-"), undefined, {
      jetstream: false,
    });
    try {
      const ctx = await openContext({ repo: repo.dir });
      const sender = await openNatsSender(ctx, parseBusUrl(plain.url) as NatsUrl);
      const delivery = await sender.send([
        asEnvelope(note("fact", "no jetstream here", { eventId: "ev-plain", sender: "w1" })),
      ]);
      await sender.close();
      expect(delivery).toMatchObject({ transport: "nats", spooled: true });
      expect(delivery.fallback_reason).toMatch(/not stored by JetStream/);
      expect(readFileSync(delivery.path as string, "utf8")).toContain("ev-plain");
    } finally {
      await plain.stop();
    }
  });
});

/** Resolves once the process is stopped (state T in /proc on Linux; elsewhere after a pause). */
async function stopped(pid: number): Promise<void> {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    return;
  }
  await waitUntil(
    () => readFileSync(stat, "utf8").split(") ")[1]?.[0] === "T",
    `${pid} stopped`,
    5,
  );
}
