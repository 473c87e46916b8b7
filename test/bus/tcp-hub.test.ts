/** The TCP hub (`director serve`) through the real bins: protocol, and the in-process client. */
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { HubUnavailableError, TcpBusClient } from "../../src/bus/tcp-client.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { readCatalog } from "../../src/repo/memory-tree.js";
import { describeResult } from "../support/bins.js";
import { envelope, fakeGithubToken, note } from "../support/envelopes.js";
import { waitUntil } from "../support/wait.js";
import {
  hello,
  journalKeys,
  makeRepo,
  noteWithId,
  Peer,
  quarantine,
  registerHubHooks,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

describe("director serve: protocol", () => {
  it("prints the listening line first and answers a hello with a welcome", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir);
    expect(hub.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(hub.port).toBeGreaterThan(0);
    const peer = await Peer.open(hub.port);
    peer.send(hello());
    const welcome = await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    const catalog = await readCatalog(repo.dir);
    expect(welcome.sender.role).toBe("director");
    expect(welcome.payload).toMatchObject({
      protocol_version: "1",
      catalog_version: catalog.catalog_version,
      catalog_hash: catalog.hash,
      max_message_bytes: 65_536,
      heartbeat_interval_seconds: 30,
    });
    peer.send(note("fact", "first over tcp", { eventId: "ev_p1", seq: 1 }));
    const ack = await peer.ackedThrough(1);
    expect(ack.payload).toEqual({ from_seq: 1, through_seq: 1 });
    expect(journalKeys(repo)).toEqual([eventIdKey("ev_p1")]);
    peer.socket.end();
    const r = await stop(hub);
    expect(r.code, describeResult(r)).toBe(0);
  });

  it("refuses an old protocol version and a connection that does not say hello", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir);
    const old = await Peer.open(hub.port);
    old.send(hello("0"));
    const refused = await old.waitFor(
      (m) => m.message_type === "protocol_incompatibility.v1",
      "incompatibility",
    );
    expect(refused.payload).toMatchObject({
      reason: "protocol_version",
      protocol_version_expected: "1",
      protocol_version_seen: "0",
    });
    await old.closed;

    const rude = await Peer.open(hub.port);
    rude.send(note("fact", "no hello first", { eventId: "ev_rude" }));
    const told = await rude.waitFor(
      (m) => m.message_type === "protocol_incompatibility.v1",
      "incompatibility",
    );
    expect(told.payload.reason).toBe("hello_expected");
    await rude.closed;
    expect(quarantine(repo).map((q) => q.reason)).toEqual(["hello-expected"]);
    expect(journalKeys(repo)).toEqual([]);
    expect((await stop(hub)).code).toBe(0);
  });

  it("quarantines an oversized line (redacted excerpt) and the connection carries on", async () => {
    const repo = await makeRepo("[agent_bus]\nmax_message_bytes = 1024\n");
    const hub = await serve(repo.dir);
    const peer = await Peer.open(hub.port);
    peer.send(hello());
    await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    const token = fakeGithubToken("oversized");
    const huge = JSON.stringify(note("fact", `${token} ${"x".repeat(200_000)}`, { seq: 2 }));
    peer.send(note("fact", "before", { eventId: "ev_before", seq: 1 }));
    // Written in pieces, as a slow writer would: the hub never holds more than the limit.
    for (let i = 0; i < huge.length; i += 16_384) peer.socket.write(huge.slice(i, i + 16_384));
    peer.send("", note("fact", "after", { eventId: "ev_after", seq: 3 }));
    await peer.ackedThrough(3);
    expect(journalKeys(repo)).toEqual([eventIdKey("ev_before"), eventIdKey("ev_after")]);
    const [record] = quarantine(repo);
    expect(record).toMatchObject({ reason: "oversized", line: 2 });
    expect(record?.source).toMatch(/^tcp\/w1@127\.0\.0\.1:\d+$/);
    expect(String(record?.excerpt)).not.toContain(token);
    expect(String(record?.excerpt)).toContain("REDACTED");
    expect(Number(record?.bytes)).toBeGreaterThan(1024);
    peer.socket.end();
    expect((await stop(hub)).code).toBe(0);
  });

  it("acknowledges a message only once it is in the journal", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir);
    const peer = await Peer.open(hub.port);
    peer.send(hello());
    await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    const ids = Array.from({ length: 600 }, (_, i) => `ev_dur_${i}`);
    const violations: string[] = [];
    let acks = 0;
    peer.onMessage = (m) => {
      if (m.message_type !== "bus_ack.v1") return;
      acks++;
      // Read the moment the ack arrives: everything it covers must already be written.
      const keys = new Set(journalKeys(repo));
      for (let seq = 1; seq <= (m.payload.through_seq as number); seq++) {
        if (!keys.has(eventIdKey(ids[seq - 1] as string))) violations.push(ids[seq - 1] as string);
      }
    };
    for (let i = 0; i < ids.length; i += 50) {
      peer.send(
        ...ids.slice(i, i + 50).map((id, j) => note("fact", id, { eventId: id, seq: i + j + 1 })),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    await peer.ackedThrough(ids.length);
    expect(acks).toBeGreaterThan(0);
    expect(violations).toEqual([]);
    // A resend (same event_id, new connection, new seq) is acknowledged and stored once.
    const again = await Peer.open(hub.port);
    again.send(hello(), note("fact", "ev_dur_0", { eventId: "ev_dur_0", seq: 1 }));
    await again.ackedThrough(1);
    expect(journalKeys(repo)).toHaveLength(ids.length);
    again.socket.end();
    peer.socket.end();
    expect((await stop(hub)).code).toBe(0);
  });

  it("drops a connection that stays silent past the heartbeat TTL", async () => {
    const repo = await makeRepo("[agent_bus]\nheartbeat_ttl_seconds = 1\n");
    const hub = await serve(repo.dir, ["--json"]);
    const peer = await Peer.open(hub.port);
    peer.send(hello());
    await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    await peer.closed;
    const r = await stop(hub, "SIGTERM");
    expect(r.code, describeResult(r)).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[1] ?? "{}")).toMatchObject({ dropped_silent: 1 });
  });
});

describe("TcpBusClient", () => {
  it("sends heartbeats on its own at the interval the welcome names", async () => {
    const repo = await makeRepo("[agent_bus]\nheartbeat_interval_seconds = 1\n");
    const hub = await serve(repo.dir);
    const client = new TcpBusClient({
      host: "127.0.0.1",
      port: hub.port,
      sender: { id: "beater" },
      heartbeat: () => ({ stage: "testing", progress: 0.5 }),
    });
    await client.connect();
    expect(client.welcome?.heartbeat_interval_seconds).toBe(1);
    const beats = () =>
      readFileSync(repo.path(".engram", "buffer", "journal.ndjson"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"heartbeat.v1"') && l.includes('"beater"'));
    await waitUntil(
      () => existsSync(repo.path(".engram", "buffer", "journal.ndjson")) && beats().length >= 2,
      "two heartbeats in the journal",
      100,
    );
    expect(JSON.parse(beats()[0] as string)).toMatchObject({ stage: "testing", progress: 0.5 });
    await client.close();
    expect((await stop(hub)).code).toBe(0);
  });

  it("gives up at once on an incompatible hub, with the envelopes it owes", async () => {
    const server = createServer((socket) => {
      socket.once("data", () => {
        const refusal = envelope(
          "protocol_incompatibility.v1",
          { reason: "protocol_version", detail: "this hub speaks 2" },
          { seq: 1 },
        );
        socket.end(`${JSON.stringify(refusal)}\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const client = new TcpBusClient({ host: "127.0.0.1", port, unreachableMs: 60_000 });
    const error = await client.send([noteWithId("ev_old", "old hub")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubUnavailableError);
    expect((error as HubUnavailableError).reason).toContain("this hub speaks 2");
    expect((error as HubUnavailableError).unacked.map((e) => e.event_id)).toEqual(["ev_old"]);
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  });
});
