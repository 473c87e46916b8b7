/**
 * The TCP hub (`director serve`) through the real bins, with workers as raw sockets, as the
 * `worker` bin and as the in-process `TcpBusClient`, on real temporary repositories.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HubUnavailableError, TcpBusClient } from "../../src/bus/tcp-client.js";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { initRepository } from "../../src/director/init.js";
import { readCatalog } from "../../src/repo/memory-tree.js";
import type { Envelope } from "../../src/schema/envelope.js";
import {
  assertBuilt,
  DIRECTOR_BIN,
  describeResult,
  director,
  type Env,
  jsonOf,
  type Spawned,
  spawnBin,
  worker,
} from "../support/bins.js";
import { envelope, fakeGithubToken, note } from "../support/envelopes.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const running: Spawned[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  // A hub a failed test left running: killed by its own pid.
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill("SIGKILL");
});
afterAll(() => dirs.cleanup());

async function makeRepo(config?: string): Promise<TempRepo> {
  const repo = dirs.repo();
  if (config !== undefined) repo.writeConfig(config);
  initRepository(await openContext({ repo: repo.dir }));
  return repo;
}

interface Hub {
  spawned: Spawned;
  address: string;
  port: number;
}

/** `director serve` on a free loopback port; resolves on its first stdout line. */
async function serve(repoDir: string, extra: string[] = [], env: Env = {}): Promise<Hub> {
  const args = ["serve", "--cycle-seconds", "0", "--repo", repoDir, ...extra];
  if (!extra.includes("--listen")) args.push("--listen", "127.0.0.1:0");
  const spawned = spawnBin(DIRECTOR_BIN, args, { cwd: repoDir, env, timeoutMs: 180_000 });
  running.push(spawned);
  const first = await new Promise<string>((resolve, reject) => {
    let out = "";
    spawned.child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    spawned.done.then((r) => reject(new Error(`director serve exited: ${describeResult(r)}`)));
  });
  const { listening } = JSON.parse(first) as { listening: string };
  return { spawned, address: listening, port: Number(listening.split(":").pop()) };
}

interface Message {
  message_type: string;
  seq: number;
  sender: { role: string; id: string };
  payload: Record<string, unknown>;
}

/** A worker speaking the protocol by hand, line by line. */
class Peer {
  readonly messages: Message[] = [];
  readonly closed: Promise<void>;
  private listeners: (() => void)[] = [];
  onMessage: ((m: Message) => void) | undefined;

  constructor(readonly socket: Socket) {
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      pending += chunk;
      for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
        const m = JSON.parse(pending.slice(0, nl)) as Message;
        pending = pending.slice(nl + 1);
        this.messages.push(m);
        this.onMessage?.(m);
      }
      for (const l of this.listeners.splice(0)) l();
    });
    socket.on("error", () => {});
    this.closed = new Promise((resolve) => socket.on("close", () => resolve()));
  }

  static async open(port: number): Promise<Peer> {
    const socket = connect({ host: "127.0.0.1", port });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new Peer(socket);
  }

  send(...lines: (object | string)[]): void {
    this.socket.write(
      lines.map((l) => `${typeof l === "string" ? l : JSON.stringify(l)}\n`).join(""),
    );
  }

  async waitFor(test: (m: Message) => boolean, what: string): Promise<Message> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = this.messages.find(test);
      if (found) return found;
      if (this.socket.destroyed || Date.now() > deadline) {
        throw new Error(`no ${what}; got ${JSON.stringify(this.messages).slice(0, 1000)}`);
      }
      await new Promise<void>((resolve) => {
        this.listeners.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  ackedThrough(seq: number): Promise<Message> {
    return this.waitFor(
      (m) => m.message_type === "bus_ack.v1" && (m.payload.through_seq as number) >= seq,
      `ack through ${seq}`,
    );
  }
}

function hello(version = "1", extra: Record<string, unknown> = {}) {
  return envelope("protocol_hello.v1", { protocol_version: version, ...extra }, { seq: 0 });
}

function journalKeys(repo: TempRepo): string[] {
  const path = repo.path(".engram", "buffer", "journal.ndjson");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { key: string }).key);
}

function quarantine(repo: TempRepo): Record<string, unknown>[] {
  const path = repo.path(".engram", "quarantine.ndjson");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function stop(hub: Hub, signal: NodeJS.Signals = "SIGTERM") {
  hub.spawned.child.kill(signal);
  return hub.spawned.done;
}

function noteWithId(id: string, text: string, sender = "w1"): Envelope {
  return note("fact", text, { eventId: id, sender }) as unknown as Envelope;
}

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
    const deadline = Date.now() + 30_000;
    const beats = () =>
      readFileSync(repo.path(".engram", "buffer", "journal.ndjson"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"heartbeat.v1"') && l.includes('"beater"'));
    while (Date.now() < deadline) {
      if (existsSync(repo.path(".engram", "buffer", "journal.ndjson")) && beats().length >= 2) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(beats().length).toBeGreaterThanOrEqual(2);
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

describe("director serve: lifecycle", () => {
  it("stops gracefully on SIGTERM: acknowledged events kept, lock released, exit 0", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir, ["--json"]);
    const client = new TcpBusClient({ host: "127.0.0.1", port: hub.port });
    const sent = Array.from({ length: 200 }, (_, i) => noteWithId(`ev_term_${i}`, `term ${i}`));
    await client.send(sent);
    expect(existsSync(repo.path(".engram", "director.lock"))).toBe(true);
    // Another Director command on the same state is refused at once, naming the hub.
    const run = await director(["run", "--json"], { cwd: repo.dir });
    expect(run.code, describeResult(run)).toBe(3);
    expect(run.stderr).toContain("held by director serve");
    const r = await stop(hub, "SIGTERM");
    await client.close();
    expect(r.code, describeResult(r)).toBe(0);
    const [first, second] = r.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ listening: hub.address });
    expect(JSON.parse(second as string)).toMatchObject({
      stopped_by: "SIGTERM",
      accepted: 200,
      acknowledged: 200,
    });
    expect(existsSync(repo.path(".engram", "director.lock"))).toBe(false);
    expect(journalKeys(repo)).toEqual(sent.map((e) => eventIdKey(e.event_id as string)));
  });

  it("refuses to listen beyond loopback without TLS, and half a TLS setup", async () => {
    const repo = await makeRepo();
    const wide = await director(["serve", "--listen", "0.0.0.0:0", "--repo", repo.dir], {
      cwd: repo.dir,
    });
    expect(wide.code, describeResult(wide)).toBe(2);
    expect(wide.stderr).toContain("--tls-cert");
    const half = await director(
      ["serve", "--listen", "127.0.0.1:0", "--tls-cert", "x.pem", "--repo", repo.dir],
      { cwd: repo.dir },
    );
    expect(half.code, describeResult(half)).toBe(2);
    expect(half.stderr).toContain("--tls-key, --tls-ca");
    const bad = await director(["serve", "--listen", "nope", "--repo", repo.dir], {
      cwd: repo.dir,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--listen");
  });

  it("worker emit falls back to the local spool when nothing listens (exit 0: durable)", async () => {
    const repo = await makeRepo();
    const port = await freePort();
    const r = await worker(
      [
        "emit",
        "--kind",
        "fact",
        "--text",
        "spooled while the hub is down",
        "--bus",
        `tcp://127.0.0.1:${port}`,
        "--json",
      ],
      { cwd: repo.dir, env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "400" } },
    );
    const out = jsonOf<{
      spooled: boolean;
      transport: string;
      fallback_reason: string;
      path: string;
      event_id: string;
    }>(r);
    expect(out).toMatchObject({ spooled: true, transport: "tcp" });
    expect(out.fallback_reason).toContain(`127.0.0.1:${port}`);
    expect(readFileSync(out.path, "utf8")).toContain(out.event_id);
    expect(readdirSync(repo.path(".engram", "spool"))).toHaveLength(1);
    // The in-process client says the same with the envelopes it still owes.
    const client = new TcpBusClient({ host: "127.0.0.1", port, unreachableMs: 200 });
    const error = await client.send([noteWithId("ev_owed", "owed")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubUnavailableError);
    expect((error as HubUnavailableError).unacked.map((e) => e.event_id)).toEqual(["ev_owed"]);
    await client.close();
  });

  it("runs Director cycles and tells connected workers what was written", async () => {
    const repo = await makeRepo(
      "[memory]\nbuffer_max_events = 20\nbuffer_keep_recent_events = 5\n",
    );
    const hub = await serve(repo.dir, ["--cycle-seconds", "1"]);
    const seen: { message_type: string; payload: Record<string, unknown> }[] = [];
    const client = new TcpBusClient({
      host: "127.0.0.1",
      port: hub.port,
      onMessage: (m) => seen.push(m),
    });
    await client.send(
      Array.from({ length: 30 }, (_, i) =>
        noteWithId(`ev_cyc_${i}`, `the cache layer needs rule number ${i}`),
      ),
    );
    const deadline = Date.now() + 30_000;
    while (!seen.some((m) => m.message_type === "engram_announce.v1") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const announce = seen.find((m) => m.message_type === "engram_announce.v1");
    const snapshot = seen.find((m) => m.message_type === "engram_catalog_snapshot.v1");
    expect(announce, JSON.stringify(seen.map((m) => m.message_type))).toBeDefined();
    const catalog = await readCatalog(repo.dir);
    expect(catalog.entries.length).toBeGreaterThan(0);
    expect(snapshot?.payload).toMatchObject({ catalog_version: catalog.catalog_version });
    const engrams = announce?.payload.engrams as { path: string; hash: string }[];
    for (const e of engrams) {
      expect(catalog.entries.some((c) => c.path === e.path && c.hash === e.hash)).toBe(true);
      expect(existsSync(repo.path(e.path))).toBe(true);
    }
    await client.close();
    expect((await stop(hub)).code).toBe(0);
  });
});

describe("director serve: drift", () => {
  it("sends sync_required.v1 to a worker behind main, nothing to one in sync", async () => {
    const origin = await makeRepo("[policy.sync_main]\nmax_commits_behind = 1\n");
    git(origin.dir, ["add", "-A"]);
    git(origin.dir, ["commit", "-q", "-m", "memory layout"]);
    const behind = dirs.dir("engram-behind-");
    git(behind, ["clone", "-q", origin.dir, "."]);
    for (let i = 0; i < 3; i++)
      git(origin.dir, ["commit", "-q", "--allow-empty", "-m", `main ${i}`]);
    const mainSha = git(origin.dir, ["rev-parse", "HEAD"]).trim();
    const current = dirs.dir("engram-current-");
    git(current, ["clone", "-q", origin.dir, "."]);
    const hub = await serve(origin.dir);
    const emit = (cwd: string) =>
      worker(
        [
          "emit",
          "--kind",
          "fact",
          "--text",
          "drift check",
          "--bus",
          `tcp://127.0.0.1:${hub.port}`,
          "--json",
        ],
        { cwd },
      );
    const late = jsonOf<{ spooled: boolean; sync_required?: Record<string, unknown> }>(
      await emit(behind),
    );
    expect(late.spooled).toBe(false);
    expect(late.sync_required).toMatchObject({
      reason: "behind_main",
      main_sha_expected: mainSha,
      required_action: "merge_main",
      commits_behind: 3,
      policy: { max_commits_behind: 1 },
    });
    const fresh = jsonOf<{ spooled: boolean; sync_required?: unknown }>(await emit(current));
    expect(fresh.spooled).toBe(false);
    expect(fresh.sync_required).toBeUndefined();
    expect((await stop(hub)).code).toBe(0);
  });
});

describe("director serve: crash and restart under load", () => {
  it("50+ concurrent writers, the hub SIGKILLed and restarted: every acknowledged event once", async () => {
    const repo = await makeRepo();
    const workerRepo = await makeRepo();
    let hub = await serve(repo.dir);
    const port = hub.port;
    const WRITERS = 52;
    const PER_WRITER = 60;
    let acked = 0;
    const ackedIds: string[] = [];
    const spooled: string[] = [];
    const clients = Array.from(
      { length: WRITERS },
      (_, w) =>
        new TcpBusClient({
          host: "127.0.0.1",
          port,
          sender: { id: `load-${w}` },
          unreachableMs: 60_000,
        }),
    );
    const writer = async (client: TcpBusClient, w: number) => {
      let i = 0;
      while (i < PER_WRITER) {
        const size = Math.min(PER_WRITER - i, 1 + ((w * 7 + i) % 9));
        const batch = Array.from({ length: size }, (_, k) =>
          noteWithId(`ev_load_${w}_${i + k}`, `writer ${w} note ${i + k}`, `load-${w}`),
        );
        i += size;
        try {
          await client.send(batch);
          acked += batch.length;
          for (const e of batch) ackedIds.push(e.event_id as string);
        } catch (error) {
          if (!(error instanceof HubUnavailableError)) throw error;
          for (const e of error.unacked) spooled.push(e.event_id as string);
        }
      }
    };
    const cli = Array.from({ length: 6 }, (_, k) =>
      worker(
        [
          "emit",
          "--kind",
          "fact",
          "--text",
          `from the worker bin ${k}`,
          "--worker",
          `bin-${k}`,
          "--bus",
          `tcp://127.0.0.1:${port}`,
          "--json",
        ],
        { cwd: workerRepo.dir, env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "60000" } },
      ),
    );
    const writing = Promise.all(clients.map(writer));
    while (acked < (WRITERS * PER_WRITER) / 3) await new Promise((r) => setTimeout(r, 5));
    const killed = await stop(hub, "SIGKILL");
    expect(killed.signal).toBe("SIGKILL");
    hub = await serve(repo.dir, ["--listen", `127.0.0.1:${port}`]);
    await writing;
    const bins = (await Promise.all(cli)).map((r) =>
      jsonOf<{ event_id: string; spooled: boolean }>(r),
    );
    for (const client of clients) await client.close();
    const r = await stop(hub);
    expect(r.code, describeResult(r)).toBe(0);

    expect(spooled).toEqual([]);
    expect(bins.every((b) => !b.spooled)).toBe(true);
    expect(ackedIds).toHaveLength(WRITERS * PER_WRITER);
    const keys = journalKeys(repo);
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const id of [...ackedIds, ...bins.map((b) => b.event_id)]) {
      expect(counts.get(eventIdKey(id)), id).toBe(1);
    }
    expect(keys).toHaveLength(WRITERS * PER_WRITER + bins.length);
    expect(clients.some((c) => c.connections > 1)).toBe(true);
  });
});

const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;

describe.skipIf(!hasOpenssl)("director serve: TLS with client certificates", () => {
  it("listens beyond loopback with TLS; a worker with a certificate gets through, one without does not", async () => {
    const pki = makePki(dirs.dir("engram-pki-"));
    const repo = await makeRepo();
    const hub = await serve(repo.dir, [
      "--listen",
      "0.0.0.0:0",
      "--tls-cert",
      pki.serverCert,
      "--tls-key",
      pki.serverKey,
      "--tls-ca",
      pki.ca,
    ]);
    expect(hub.address).toMatch(/^0\.0\.0\.0:\d+$/);
    const url = `tls://127.0.0.1:${hub.port}`;
    const ok = jsonOf<{ spooled: boolean; event_id: string }>(
      await worker(["emit", "--kind", "fact", "--text", "over tls", "--bus", url, "--json"], {
        cwd: repo.dir,
        env: {
          ENGRAM_TLS_CERT: pki.clientCert,
          ENGRAM_TLS_KEY: pki.clientKey,
          ENGRAM_TLS_CA: pki.ca,
        },
      }),
    );
    expect(ok.spooled).toBe(false);
    expect(journalKeys(repo)).toContain(eventIdKey(ok.event_id));

    const noCert = await worker(["emit", "--kind", "fact", "--text", "no cert", "--bus", url], {
      cwd: repo.dir,
    });
    expect(noCert.code, describeResult(noCert)).toBe(2);
    expect(noCert.stderr).toContain("ENGRAM_TLS_CERT");

    // A stranger without a client certificate never hears a welcome.
    const stranger = tlsConnect({ host: "127.0.0.1", port: hub.port, ca: readFileSync(pki.ca) });
    let heard = "";
    stranger.setEncoding("utf8");
    stranger.on("data", (d: string) => {
      heard += d;
    });
    stranger.on("error", () => {});
    stranger.on("secureConnect", () => stranger.write(`${JSON.stringify(hello())}\n`));
    await new Promise((resolve) => stranger.on("close", resolve));
    expect(heard).not.toContain("protocol_welcome.v1");
    expect((await stop(hub)).code).toBe(0);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A CA, a hub certificate for 127.0.0.1 and a worker certificate, made with openssl. */
function makePki(dir: string) {
  const run = (args: string[]) => {
    const r = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
  };
  const key = (name: string) =>
    run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name]);
  key("ca.key");
  run([
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=engram test CA",
  ]);
  writeFileSync(
    join(dir, "server.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  for (const [name, cn] of [
    ["server", "localhost"],
    ["client", "engram-worker"],
  ] as const) {
    key(`${name}.key`);
    run(["req", "-new", "-key", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`]);
    run([
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    ]);
  }
  return {
    ca: join(dir, "ca.pem"),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server.key"),
    clientCert: join(dir, "client.pem"),
    clientKey: join(dir, "client.key"),
  };
}
