/**
 * A real nats-server with JetStream for the NATS tests and benchmark: on 127.0.0.1, on a port
 * the server picks itself (no race for a "free" port), with its store in a folder the caller
 * owns, stopped by the caller.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The nats-server binary: on PATH, else where Debian's package puts it; undefined when absent. */
export function findNatsServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const candidate = join(dir, "nats-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface NatsServer {
  /** `nats://127.0.0.1:PORT`, as `--bus` takes it. */
  url: string;
  port: number;
  pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
}

const READY_MS = 15_000;

export async function startNatsServer(
  storeDir: string,
  binary = findNatsServer(),
  options: { jetstream?: boolean /** More flags (`--user`, `--pass`...). */; args?: string[] } = {},
): Promise<NatsServer> {
  if (binary === undefined)
    throw new Error("nats-server is not installed (apt-get install nats-server)");
  const args = ["-sd", storeDir, "-a", "127.0.0.1", "-p", "-1", ...(options.args ?? [])];
  if (options.jetstream !== false) args.unshift("-js");
  const child = spawn(binary, args, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await readyPort(child);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Reads the server's log until it listens and is ready; fails with the log otherwise. */
function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let log = "";
    let port: number | undefined;
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`nats-server ${why}\n${log.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${READY_MS} ms`), READY_MS);
    const onData = (chunk: Buffer) => {
      log += chunk.toString("utf8");
      const listening = /Listening for client connections on [^\s]+:(\d+)/.exec(log);
      if (listening) port = Number(listening[1]);
      if (port !== undefined && log.includes("Server is ready") && !settled) {
        settled = true;
        clearTimeout(timer);
        // Keep draining the pipes, so a chatty server never blocks on a full one.
        child.stdout?.off("data", onData);
        child.stderr?.off("data", onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(port);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
  });
}
