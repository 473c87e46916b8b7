/**
 * The TCP hub at its limits: more workers than `agent_bus.max_connections`, and a hub that
 * runs out of file descriptors (a child under a low `ulimit -n`). It refuses or drops the
 * connections it cannot hold, and keeps serving.
 */
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { HubUnavailableError, TcpBusClient } from "../../src/bus/tcp-client.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { childEnv, DIRECTOR_BIN, describeResult, jsonOf, worker } from "../support/bins.js";
import { git } from "../support/repo.js";
import { waitUntil } from "../support/wait.js";
import {
  hello,
  journalKeys,
  makeRepo,
  noteWithId,
  Peer,
  registerHubHooks,
  running,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

/** Sends until the hub takes it: a refusal at the cap is an answer, so this waits on events. */
async function sendWhenAdmitted(client: TcpBusClient, id: string, attempts = 200): Promise<number> {
  for (let refused = 0; ; refused++) {
    try {
      await client.send([noteWithId(id, `admitted ${id}`)]);
      return refused;
    } catch (error) {
      const atCap = error instanceof HubUnavailableError && /connection limit/.test(error.reason);
      if (!atCap || refused >= attempts) throw error;
    }
  }
}

/** `director serve` under `ulimit -n limit`, which sets the hard limit too (Node cannot raise it). */
function serveUnderLimit(repoDir: string, limit: number) {
  const args = ["serve", "--cycle-seconds", "0", "--listen", "127.0.0.1:0", "--repo", repoDir];
  return spawn(
    "bash",
    [
      "-c",
      `ulimit -n ${limit} && exec "$0" "$@"`,
      process.execPath,
      DIRECTOR_BIN,
      ...args,
      "--json",
    ],
    { cwd: repoDir, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
}

describe("director serve: the connection cap", () => {
  it("refuses a connection over agent_bus.max_connections with connection_limit, spools the worker, keeps serving", async () => {
    const repo = await makeRepo("[agent_bus]\nmax_connections = 2\n");
    const workerRepo = await makeRepo();
    const hub = await serve(repo.dir, ["--json"]);
    const peers = [await Peer.open(hub.port), await Peer.open(hub.port)];
    for (const peer of peers) {
      peer.send(hello());
      await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    }

    const third = await Peer.open(hub.port);
    third.send(hello());
    const refusal = await third.waitFor(
      (m) => m.message_type === "protocol_incompatibility.v1",
      "refusal",
    );
    expect(refusal.payload).toMatchObject({ reason: "connection_limit", max_connections: 2 });
    expect(String(refusal.payload.detail)).toContain("agent_bus.max_connections = 2");
    await third.closed;

    // The worker bin: exit 0, spooled, and it says why.
    const emitted = jsonOf<{ spooled: boolean; fallback_reason: string; event_id: string }>(
      await worker(
        [
          "emit",
          "--kind",
          "fact",
          "--text",
          "over the cap",
          "--bus",
          `tcp://127.0.0.1:${hub.port}`,
          "--json",
        ],
        { cwd: workerRepo.dir, env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "60000" } },
      ),
    );
    expect(emitted.spooled).toBe(true);
    expect(emitted.fallback_reason).toMatch(/connection limit.*max_connections = 2/);
    expect(journalKeys(repo)).not.toContain(eventIdKey(emitted.event_id));

    // The welcomed workers are still served, and a place freed is taken again.
    peers[0]?.send(noteWithId("ev_cap_kept", "still served", "w1"));
    await peers[0]?.ackedThrough(1);
    peers[1]?.socket.end();
    await peers[1]?.closed;
    const client = new TcpBusClient({ host: "127.0.0.1", port: hub.port, unreachableMs: 60_000 });
    await sendWhenAdmitted(client, "ev_cap_after");
    await client.close();
    peers[0]?.socket.end();

    const r = await stop(hub);
    expect(r.code, describeResult(r)).toBe(0);
    expect(journalKeys(repo)).toEqual([eventIdKey("ev_cap_kept"), eventIdKey("ev_cap_after")]);
    const summary = JSON.parse(r.stdout.trim().split("\n").pop() as string);
    expect(summary.refused_at_cap).toBeGreaterThanOrEqual(2);
    expect(summary.accept_errors).toBe(0);
  });
});

describe("director serve: out of file descriptors", () => {
  it("under a low ulimit -n the hub refuses connections, saying why, before it runs out of descriptors, and keeps serving", async () => {
    const repo = await makeRepo("[agent_bus]\nmax_connections = 1000\n");
    // A main to judge workers against: each hello below names an ancestor of its own, so the
    // hub reads git (spawns) for each while it is out of descriptors.
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "main"]);
    const LIMIT = 160;
    const child = serveUnderLimit(repo.dir, LIMIT);
    // Killed by the file's hooks if the test stops half-way (a timeout skips `finally`).
    running.push({
      child,
      done: new Promise(() => {}),
      startedAt: Date.now(),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk;
          const nl = stdout.indexOf("\n");
          if (nl !== -1)
            resolve(Number(JSON.parse(stdout.slice(0, nl)).listening.split(":").pop()));
        });
        void exited.then((code) => reject(new Error(`hub exited ${code}: ${stderr}`)));
      });
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk;
      });

      // The journal is open before the flood: a commit needs no new descriptor.
      const warm = new TcpBusClient({ host: "127.0.0.1", port, unreachableMs: 60_000 });
      await warm.send([noteWithId("ev_warm", "before the flood")]);
      await warm.close();

      // More workers than the hub has descriptors, each saying hello and sending a note: the
      // hub takes what it can (and reads git for their drift with what is left), libuv closes
      // the rest unread.
      const outcomes: Promise<"acked" | "closed">[] = [];
      const refusals: string[] = [];
      const sockets: Socket[] = [];
      for (let i = 0; i < LIMIT + 40; i++) {
        const socket = connect({ host: "127.0.0.1", port });
        sockets.push(socket);
        socket.on("error", () => {});
        socket.setEncoding("utf8");
        socket.on("connect", () =>
          socket.write(
            `${JSON.stringify(hello("1", { main_ancestor_sha: i.toString(16).padStart(40, "a") }))}\n${JSON.stringify(noteWithId(`ev_fd_${i}`, `flood ${i}`, `fd-${i}`))}\n`,
          ),
        );
        outcomes.push(
          new Promise((resolve) => {
            let heard = "";
            socket.on("data", (chunk: string) => {
              heard += chunk;
              if (heard.includes('"bus_ack.v1"')) resolve("acked");
            });
            socket.on("end", () => {
              if (heard.includes('"connection_limit"')) refusals.push(heard);
            });
            socket.on("close", () => resolve("closed"));
          }),
        );
      }
      const settled = await Promise.all(outcomes);
      const acked = settled.filter((o) => o === "acked").length;
      expect(child.exitCode, stderr).toBeNull();
      expect(acked).toBeGreaterThan(0);
      // More than the descriptors allow: the hub refused some, saying why (the cap it lowered
      // to fit ulimit -n), before it ran out of descriptors to accept them.
      expect(acked).toBeLessThan(sockets.length);
      expect(refusals.length).toBeGreaterThan(0);
      expect(refusals[0]).toMatch(
        /lowered from agent_bus.max_connections = 1000 to fit the open-files limit \(ulimit -n 160\)/,
      );
      const open = sockets.filter((s) => !s.destroyed);
      const gone = open.map((s) => new Promise((resolve) => s.once("close", resolve)));
      for (const socket of open) socket.destroy();
      await Promise.all(gone);

      // The hub frees a slot when it sees the close (a connection still reading git for its
      // drift holds it until then): until it has, a new worker is refused, saying so.
      let refusedAfter = 0;
      await waitUntil(async () => {
        const client = new TcpBusClient({ host: "127.0.0.1", port, unreachableMs: 60_000 });
        try {
          await client.send([noteWithId("ev_after_emfile", "served after EMFILE")]);
          return true;
        } catch (error) {
          if (!(error instanceof HubUnavailableError) || !/connection limit/.test(error.message)) {
            throw error;
          }
          refusedAfter++;
          return false;
        } finally {
          await client.close();
        }
      }, "the hub to serve a worker once the flood's connections are gone");
      expect(journalKeys(repo)).toContain(eventIdKey("ev_after_emfile"));

      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const summary = JSON.parse(stdout.trim().split("\n").pop() as string);
      expect(summary.acknowledged).toBe(acked + 2);
      expect(summary.refused_at_cap).toBeGreaterThanOrEqual(refusals.length + refusedAfter);
      expect(summary.accept_errors).toBe(0);
      expect(stderr).toMatch(
        /serving at most \d+ connections, lowered from agent_bus.max_connections = 1000/,
      );
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("under ulimit -n 64 the hub starts (zod is bundled: its ~95 files are one), and a worker's note is acknowledged", async () => {
    const repo = await makeRepo("");
    const workerRepo = await makeRepo();
    const child = serveUnderLimit(repo.dir, 64);
    running.push({ child, done: new Promise(() => {}), startedAt: Date.now() });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    // The first stdout line: listening, or the error's JSON when it could not start.
    const first = await new Promise<string | undefined>((resolve) => {
      child.stdout.on("data", (chunk: string) => {
        stdout += chunk;
        if (stdout.includes("\n")) resolve(stdout.slice(0, stdout.indexOf("\n")));
      });
      void exited.then(() => resolve(stdout.split("\n")[0]));
    });
    try {
      const line = JSON.parse(first ?? "{}") as { listening?: string };
      expect(line.listening, stderr).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(stderr).toMatch(/to fit the open-files limit \(ulimit -n 64\)/);
      const emitted = jsonOf<{ spooled: boolean; event_id: string }>(
        await worker(
          [
            "emit",
            "--kind",
            "fact",
            "--text",
            "through a hub under ulimit -n 64",
            "--bus",
            `tcp://${line.listening}`,
            "--json",
          ],
          { cwd: workerRepo.dir, env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "60000" } },
        ),
      );
      expect(emitted.spooled).toBe(false);
      expect(journalKeys(repo)).toContain(eventIdKey(emitted.event_id));
      child.kill("SIGTERM");
      expect(await exited, stderr).toBe(0);
      expect(stderr).not.toMatch(/internal error|EMFILE/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
