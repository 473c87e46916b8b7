/**
 * The TCP hub (`director serve`) through the real bins, with workers as raw sockets, as the
 * `worker` bin and as the in-process `TcpBusClient`, on real temporary repositories.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import { describe, expect, it } from "vitest";
import { HubUnavailableError, TcpBusClient } from "../../src/bus/tcp-client.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { describeResult, jsonOf, worker } from "../support/bins.js";
import {
  dirs,
  hello,
  journalKeys,
  makePki,
  makeRepo,
  noteWithId,
  registerHubHooks,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

describe("director serve: crash and restart under load", () => {
  it("50+ concurrent writers, the hub SIGKILLed and restarted: every acknowledged event once", async () => {
    const repo = await makeRepo();
    const workerRepo = await makeRepo();
    let hub = await serve(repo.dir);
    const port = hub.port;
    const WRITERS = 52;
    const PER_WRITER = 60;
    let acked = 0;
    // The hub is killed once a third is acknowledged: an event, not a poll of the clock.
    let thirdAcked: () => void = () => {};
    const third = new Promise<void>((resolve) => {
      thirdAcked = resolve;
    });
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
          if (acked >= (WRITERS * PER_WRITER) / 3) thirdAcked();
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
        // No deadline of their own shorter than the test's: a bin killed at 30 s under load
        // would fail the test for the machine's speed, not the hub's behaviour.
        {
          cwd: workerRepo.dir,
          env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "60000" },
          timeoutMs: 170_000,
        },
      ),
    );
    const writing = Promise.all(clients.map(writer));
    await third;
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
      expect(counts.get(eventIdKey(id as string)), id).toBe(1);
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
    expect(journalKeys(repo)).toContain(eventIdKey(ok.event_id as string));

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
