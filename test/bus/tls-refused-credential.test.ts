/**
 * A `tls://` bus whose certificate the worker does not trust is a permanent error: exit 2
 * naming the bus and the certificate, nothing spooled (a spooled note would wait for a
 * Director that never takes it). Only a hub that is down falls back to the spool. (A hub that
 * refuses the worker's certificate closes the connection after the handshake, which a worker
 * cannot yet tell from a hub going down: that case still spools.)
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeResult, worker } from "../support/bins.js";
import { dirs, makePki, makeRepo, registerHubHooks, serve } from "./tcp-hub-fixtures.js";

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
});
