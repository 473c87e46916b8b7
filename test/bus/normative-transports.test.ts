/**
 * The same stream in the upstream payload shapes through every transport: the local spool,
 * the TCP hub (a raw socket speaking hand-written NDJSON, whose upstream hello is far behind
 * main), NATS JetStream and git refs. Each stores every distinct event once and quarantines
 * nothing but malformed and oversized lines.
 */
import { existsSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, startNatsServer } from "../../bench/nats-server.js";
import { parseBusUrl } from "../../src/bus/url.js";
import { openContext } from "../../src/context/repo-context.js";
import type { Envelope } from "../../src/schema/envelope.js";
import { deliver } from "../../src/worker/emit.js";
import {
  assertBuilt,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
} from "../support/bins.js";
import {
  type NormativeStream,
  normativeStream,
  upstreamHeartbeat,
  upstreamHello,
} from "../support/normative.js";
import { git, TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";
import { WAIT_SAFETY_MS } from "../support/wait.js";

const dirs = new TempDirs();
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
let stream: NormativeStream;
beforeAll(() => {
  assertBuilt();
  Object.assign(process.env, GIT_ENV);
  stream = normativeStream(3000, { seed: 23 });
});
afterAll(() => dirs.cleanup());

interface Counts {
  accepted: number;
  duplicates: number;
  quarantined: number;
}

/** The valid envelopes, in sends of `size`. */
function sends(size = 250): Envelope[][] {
  const envelopes = stream.envelopes as unknown as Envelope[];
  const out: Envelope[][] = [];
  for (let i = 0; i < envelopes.length; i += size) out.push(envelopes.slice(i, i + size));
  return out;
}

function journalCount(dir: string): number {
  const path = join(dir, ".engram", "buffer", "journal.ndjson");
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0).length;
}

function quarantineReasons(dir: string): Record<string, number> {
  const path = join(dir, ".engram", "quarantine.ndjson");
  const out: Record<string, number> = {};
  if (!existsSync(path)) return out;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const reason = (JSON.parse(line) as { reason: string }).reason;
    out[reason] = (out[reason] ?? 0) + 1;
  }
  return out;
}

async function initRepo(prefix: string): Promise<TempRepo> {
  const repo = dirs.repo(prefix);
  jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
  return repo;
}

describe("the upstream-shaped stream through every transport", () => {
  it("the local spool (worker sends, drained by director run)", async () => {
    const repo = await initRepo("engram-normative-spool-");
    const ctx = await openContext({ repo: repo.dir });
    for (const batch of sends()) {
      expect((await deliver(ctx, batch, { kind: "spool" })).spooled).toBe(true);
    }
    const run = jsonOf<{ drained: Counts }>(
      await director(["run", "--dry-run", "--json"], { cwd: repo.dir, timeoutMs: 120_000 }),
    );
    expect(run.drained).toMatchObject({
      accepted: stream.unique,
      duplicates: stream.duplicates,
      quarantined: 0,
    });
    expect(journalCount(repo.dir)).toBe(stream.unique);
  });

  it("git refs (worker sends to git:origin, director ingest --bus git:origin)", async () => {
    const template = await initRepo("engram-normative-git-template-");
    git(template.dir, ["add", "-A"]);
    git(template.dir, ["commit", "-q", "-m", "engram init"]);
    const origin = join(dirs.dir("engram-normative-origin-"), "origin.git");
    git(template.dir, ["init", "-q", "--bare", "-b", "main", origin]);
    git(template.dir, ["push", "-q", origin, "main"]);
    const clone = (name: string) => {
      const dir = join(dirs.dir(`engram-normative-${name}-`), "repo");
      git(template.dir, ["clone", "-q", origin, dir]);
      return dir;
    };
    const writer = clone("writer");
    const directorDir = clone("director");
    jsonOf(await director(["init", "--json"], { cwd: directorDir }));
    const ctx = await openContext({ repo: writer });
    for (const batch of sends(1000)) {
      const delivery = await deliver(ctx, batch, parseBusUrl("git:origin"));
      expect(delivery.spooled, JSON.stringify(delivery)).toBe(false);
    }
    const drained = jsonOf<Counts>(
      await director(["ingest", "--bus", "git:origin", "--json"], {
        cwd: directorDir,
        env: GIT_ENV,
        timeoutMs: 120_000,
      }),
    );
    expect(drained).toMatchObject({
      accepted: stream.unique,
      duplicates: stream.duplicates,
      quarantined: 0,
    });
    expect(journalCount(directorDir)).toBe(stream.unique);
  });

  it.skipIf(findNatsServer() === undefined)(
    "NATS JetStream (worker sends to nats://, director ingest --bus nats://)",
    async () => {
      const server = await startNatsServer(dirs.dir("engram-normative-nats-store-"));
      try {
        const repo = await initRepo("engram-normative-nats-");
        repo.writeConfig(
          tomlConfig({
            "agent_bus.nats": {
              stream: "NORMATIVE",
              subject_prefix: "normative.events",
              ack_wait_seconds: 5,
            },
          }),
        );
        const ctx = await openContext({ repo: repo.dir });
        for (const batch of sends()) {
          const delivery = await deliver(ctx, batch, parseBusUrl(server.url));
          expect(delivery.spooled, JSON.stringify(delivery)).toBe(false);
        }
        const drained = jsonOf<Counts>(
          await director(["ingest", "--bus", server.url, "--json"], {
            cwd: repo.dir,
            timeoutMs: 120_000,
          }),
        );

        // Duplicates are not compared: JetStream drops a resend whose message id it holds, and
        // redelivers what a slow drain did not acknowledge in time (at least once).
        expect(drained).toMatchObject({ accepted: stream.unique, quarantined: 0 });
        expect(journalCount(repo.dir)).toBe(stream.unique);
      } finally {
        await server.stop();
      }
    },
  );

  it("director serve, with a raw socket whose upstream hello is far behind main: sync_required.v1, then every line read", async () => {
    const repo = await initRepo("engram-normative-hub-");
    repo.writeConfig("[policy.sync_main]\nmax_commits_behind = 1\n");
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "engram init"]);
    const old = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    for (let i = 0; i < 5; i++) git(repo.dir, ["commit", "-q", "--allow-empty", "-m", `main ${i}`]);
    const head = git(repo.dir, ["rev-parse", "HEAD"]).trim();

    const hub = spawnBin(
      DIRECTOR_BIN,
      ["serve", "--cycle-seconds", "0", "--listen", "127.0.0.1:0", "--repo", repo.dir, "--json"],
      { cwd: repo.dir, timeoutMs: 180_000 },
    );
    try {
      const port = await listeningPort(hub.child.stdout as NodeJS.ReadableStream);
      const socket = connect({ host: "127.0.0.1", port });
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("error", reject);
      });
      const received = collectLines(socket);
      socket.write(
        `${JSON.stringify(upstreamHello({ sender: "spec-worker", mainAncestorSha: old }))}\n`,
      );
      const welcome = await received.waitFor((m) => m.message_type === "protocol_welcome.v1");
      expect(welcome.payload).toMatchObject({
        protocol_version: "0.1",
        director: { run_id: expect.stringMatching(/^serve-/), main_sha_expected: head },
      });
      const sync = await received.waitFor((m) => m.message_type === "sync_required.v1");
      expect(sync.payload).toMatchObject({
        reason: "behind_main",
        main_sha_expected: head,
        required_action: "merge_main",
        commits_behind: 5,
      });

      // An upstream heartbeat stating the same old ancestor under state.repo: judged again.
      const beat = upstreamHeartbeat(
        { stage: "CODE", issue_number: 7, main_ancestor_sha: old },
        { sender: "spec-worker", seq: 1, eventId: "hb-old" },
      );
      socket.write(`${JSON.stringify(beat)}\n`);
      await received.waitFor((m) => m.message_type === "sync_required.v1" && m !== sync);
      socket.write(`${stream.lines.join("\n")}\n`);
      await received.waitFor(
        (m) =>
          m.message_type === "bus_ack.v1" &&
          (m.payload.through_seq as number) >= stream.lines.length + 1,
      );
      socket.end();
      hub.child.kill("SIGTERM");
      const done = await hub.done;
      expect(done.code, describeResult(done)).toBe(0);
      const summary = JSON.parse(done.stdout.trim().split("\n").pop() as string) as Counts;
      expect(summary).toMatchObject({
        accepted: stream.unique + 1,
        duplicates: stream.duplicates,
        quarantined: stream.malformed + stream.oversized,
      });
      expect(journalCount(repo.dir)).toBe(stream.unique + 1);
      expect(quarantineReasons(repo.dir)).toEqual({
        "malformed-json": stream.malformed,
        oversized: stream.oversized,
      });
    } finally {
      if (hub.child.exitCode === null) hub.child.kill("SIGKILL");
    }
  });
});

interface Line {
  message_type: string;
  payload: Record<string, unknown>;
}

function listeningPort(stdout: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    stdout.on("data", (chunk: Buffer | string) => {
      out += chunk.toString();
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      const { listening } = JSON.parse(out.slice(0, nl)) as { listening: string };
      resolve(Number(listening.split(":").pop()));
    });
    stdout.once("end", () => reject(new Error(`director serve printed no address: ${out}`)));
  });
}

/** The hub's lines as they arrive, and a wait for one that passes a test. */
function collectLines(socket: Socket) {
  const lines: Line[] = [];
  let pending = "";
  let wake: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      lines.push(JSON.parse(pending.slice(0, nl)) as Line);
      pending = pending.slice(nl + 1);
    }
    wake?.();
  });
  socket.on("error", () => {});
  return {
    async waitFor(test: (m: Line) => boolean): Promise<Line> {
      const deadline = Date.now() + WAIT_SAFETY_MS;
      for (;;) {
        const found = lines.find(test);
        if (found) return found;
        if (Date.now() > deadline || socket.destroyed) {
          throw new Error(`not received; got ${JSON.stringify(lines).slice(0, 800)}`);
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    },
  };
}
