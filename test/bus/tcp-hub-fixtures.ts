/**
 * Helpers of the TCP hub tests: a hub through the `director` bin, workers as raw sockets
 * (`Peer`), the state files to look at, and a PKI for TLS. Each test file registers the
 * hooks that stop what it started (`running`) and remove its folders (`dirs`).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { initRepository } from "../../src/director/init.js";
import type { Envelope } from "../../src/schema/envelope.js";
import {
  assertBuilt,
  DIRECTOR_BIN,
  describeResult,
  type Env,
  type Spawned,
  spawnBin,
} from "../support/bins.js";
import { envelope, note } from "../support/envelopes.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { WAIT_SAFETY_MS } from "../support/wait.js";

export const dirs = new TempDirs();
export const running: Spawned[] = [];

/** The hooks of a TCP hub test file: bins built, hubs a failed test left killed, folders removed. */
export function registerHubHooks(): void {
  beforeAll(() => assertBuilt());
  afterEach(() => {
    // A hub a failed test left running: killed by its own pid.
    for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill("SIGKILL");
  });
  afterAll(() => dirs.cleanup());
}

export async function makeRepo(config?: string): Promise<TempRepo> {
  const repo = dirs.repo();
  if (config !== undefined) repo.writeConfig(config);
  initRepository(await openContext({ repo: repo.dir }));
  return repo;
}

export interface Hub {
  spawned: Spawned;
  address: string;
  port: number;
}

/** `director serve` on a free loopback port; resolves on its first stdout line. */
export async function serve(repoDir: string, extra: string[] = [], env: Env = {}): Promise<Hub> {
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

export interface Message {
  message_type: string;
  seq: number;
  sender: { role: string; id: string };
  payload: Record<string, unknown>;
}

/** A worker speaking the protocol by hand, line by line. */
export class Peer {
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

  /** A connection from `localAddress` (any of 127.0.0.0/8 on Linux: another sender). */
  static async open(port: number, localAddress?: string): Promise<Peer> {
    const socket = connect({ host: "127.0.0.1", port, ...(localAddress ? { localAddress } : {}) });
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
    const deadline = Date.now() + WAIT_SAFETY_MS;
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

export function hello(version = "1", extra: Record<string, unknown> = {}) {
  return envelope("protocol_hello.v1", { protocol_version: version, ...extra }, { seq: 0 });
}

/**
 * The keys of the journal's whole lines. A line still being appended (read while the hub
 * writes a later batch) is left out, as the Director leaves out a torn last line: it was
 * never acknowledged.
 */
export function journalKeys(repo: TempRepo): string[] {
  const path = repo.path(".engram", "buffer", "journal.ndjson");
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { key: string }).key);
}

export function quarantine(repo: TempRepo): Record<string, unknown>[] {
  const path = repo.path(".engram", "quarantine.ndjson");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function stop(hub: Hub, signal: NodeJS.Signals = "SIGTERM") {
  hub.spawned.child.kill(signal);
  return hub.spawned.done;
}

export function noteWithId(id: string, text: string, sender = "w1"): Envelope {
  return note("fact", text, { eventId: id, sender }) as unknown as Envelope;
}

export function freePort(): Promise<number> {
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
export function makePki(dir: string) {
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
