/**
 * A `tls://` bus whose certificate the worker does not trust, or a hub that does not accept
 * the worker's, is a permanent error: exit 2 naming the bus and the certificate, nothing
 * spooled (a spooled note would wait for a Director that never takes it). Only a hub that is
 * down falls back to the spool. A hub that refuses a certificate says so
 * (`protocol_incompatibility.v1`, `client_certificate`) and takes nothing from that worker.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { describeResult, jsonOf, worker } from "../support/bins.js";
import {
  dirs,
  hello,
  journalKeys,
  makePki,
  makeRepo,
  noteWithId,
  Peer,
  quarantine,
  registerHubHooks,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;

function spooled(cwd: string): string[] {
  const spool = join(cwd, ".engram", "spool");
  return existsSync(spool) ? readdirSync(spool) : [];
}

describe.skipIf(!hasOpenssl)("a tls:// bus and certificates", () => {
  it("a hub certificate the worker does not trust is exit 2 naming it, nothing spooled", async () => {
    const team = makePki(dirs.dir("engram-pki-team-"));
    const other = makePki(dirs.dir("engram-pki-other-"));
    const repo = await makeRepo();
    const hub = await serve(repo.dir, [
      "--tls-cert",
      team.serverCert,
      "--tls-key",
      team.serverKey,
      "--tls-ca",
      team.ca,
    ]);
    const url = `tls://127.0.0.1:${hub.port}`;
    const emit = (env: Record<string, string>) =>
      worker(["emit", "--kind", "fact", "--text", "over tls", "--bus", url], {
        cwd: repo.dir,
        env,
      });

    // The hub's certificate is not one the worker's CA signed: the worker refuses it.
    const untrusted = await emit({
      ENGRAM_TLS_CERT: team.clientCert,
      ENGRAM_TLS_KEY: team.clientKey,
      ENGRAM_TLS_CA: other.ca,
    });
    expect(untrusted.code, describeResult(untrusted)).toBe(2);
    expect(untrusted.stderr).toContain(url);
    expect(untrusted.stderr).toMatch(/certificate is not trusted/);
    expect(spooled(repo.dir)).toEqual([]);
  });

  it("a hub that does not accept the worker's certificate is exit 2, nothing spooled or taken", async () => {
    const team = makePki(dirs.dir("engram-pki-team-"));
    const other = makePki(dirs.dir("engram-pki-other-"));
    const repo = await makeRepo();
    const hub = await serve(repo.dir, [
      "--tls-cert",
      team.serverCert,
      "--tls-key",
      team.serverKey,
      "--tls-ca",
      team.ca,
      "--json",
    ]);
    const url = `tls://127.0.0.1:${hub.port}`;
    const emit = (cert: string, key: string) =>
      worker(["emit", "--kind", "fact", "--text", "over tls", "--bus", url, "--json"], {
        cwd: repo.dir,
        env: { ENGRAM_TLS_CERT: cert, ENGRAM_TLS_KEY: key, ENGRAM_TLS_CA: team.ca },
      });

    // The worker trusts the hub, but its certificate was signed by another CA.
    const refused = await emit(other.clientCert, other.clientKey);
    expect(refused.code, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain(url);
    expect(refused.stderr).toContain("refused this worker's certificate");
    expect(refused.stderr).toContain("nothing was sent or spooled");
    expect(spooled(repo.dir)).toEqual([]);

    // A client that sends a hello and a note at once hears the refusal and nothing else.
    const socket = tlsConnect({
      host: "127.0.0.1",
      port: hub.port,
      ca: readFileSync(team.ca),
      cert: readFileSync(other.clientCert),
      key: readFileSync(other.clientKey),
    });
    const stranger = new Peer(socket);
    socket.once("secureConnect", () =>
      stranger.send(hello(), { ...noteWithId("ev_stranger", "not taken"), seq: 1 }),
    );
    await stranger.closed;
    expect(stranger.messages.map((m) => [m.message_type, m.payload.reason])).toEqual([
      ["protocol_incompatibility.v1", "client_certificate"],
    ]);
    expect(journalKeys(repo)).toEqual([]);
    expect(quarantine(repo)).toEqual([]);

    // The team's own certificate is delivered.
    const trusted = jsonOf<{ spooled: boolean; event_id: string }>(
      await emit(team.clientCert, team.clientKey),
    );
    expect(trusted.spooled).toBe(false);
    expect(journalKeys(repo)).toEqual([eventIdKey(trusted.event_id)]);
    const done = await stop(hub);
    expect(done.code, describeResult(done)).toBe(0);
    const last = done.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .pop() as string;
    const summary = JSON.parse(last);
    expect(summary).toMatchObject({ accepted: 1, quarantined: 0, refused: 2 });
    expect(spooled(repo.dir)).toEqual([]);
  });
});
