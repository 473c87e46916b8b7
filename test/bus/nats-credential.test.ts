/**
 * A NATS bus that requires a credential (issue 36): real nats-servers, one requiring a user
 * and a password, one a token. The worker gives the one its environment names
 * (`ENGRAM_NATS_USER`/`ENGRAM_NATS_PASSWORD`, `ENGRAM_NATS_TOKEN`) and its note is stored by
 * JetStream; without it, or with a wrong one, it is exit 2 naming the bus and saying the
 * credential was refused, with nothing spooled. A credential in the bus URL is refused before
 * any connection, without echoing it.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { type ConnectionOptions, connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "../../bench/nats-server.js";
import { EXIT } from "../../src/errors.js";
import {
  assertBuilt,
  describeResult,
  director,
  type Env,
  jsonOf,
  worker,
} from "../support/bins.js";
import { NATS_INSTALL } from "../support/nats.js";
import { TempDirs, tomlConfig } from "../support/repo.js";
import { binary, skipNats } from "./nats-harness.js";

const dirs = new TempDirs();
const PASSWORD = "only-the-team-knows";
const TOKEN = "s3cret-team-token";
let withUser: NatsServer;
let withToken: NatsServer;
let withPermissions: NatsServer;

beforeAll(async () => {
  if (skipNats) return;
  assertBuilt();
  if (binary === undefined) throw new Error(`nats-server is not installed: ${NATS_INSTALL}`);
  withUser = await startNatsServer(dirs.dir("engram-nats-auth-store-"), binary, {
    args: ["--user", "team", "--pass", PASSWORD],
  });
  withToken = await startNatsServer(dirs.dir("engram-nats-token-store-"), binary, {
    args: ["--auth", TOKEN],
  });
  // "reader" may connect but not publish the notes' subjects.
  const conf = join(dirs.dir("engram-nats-perm-conf-"), "server.conf");
  writeFileSync(
    conf,
    `authorization { users = [ { user: "reader", password: "${PASSWORD}", permissions: { publish: { deny: ["authperm.>"] } } } ] }\n`,
  );
  withPermissions = await startNatsServer(dirs.dir("engram-nats-perm-store-"), binary, {
    args: ["-c", conf],
  });
});
afterAll(async () => {
  await withUser?.stop();
  await withToken?.stop();
  await withPermissions?.stop();
  dirs.cleanup();
});

/** A Director's checkout whose notes go to a stream of its own. */
async function repoWithStream(stream: string) {
  const repo = dirs.repo("engram-nats-auth-");
  const init = await director(["init"], { cwd: repo.dir });
  expect(init.code, describeResult(init)).toBe(0);
  repo.writeConfig(
    tomlConfig({ "agent_bus.nats": { stream, subject_prefix: `${stream.toLowerCase()}.events` } }),
  );
  return repo;
}

function spooled(dir: string): string[] {
  const spool = join(dir, ".engram", "spool");
  return existsSync(spool) ? readdirSync(spool) : [];
}

/** Messages the stream holds, read with the server's own credential. */
async function storedIn(server: NatsServer, auth: Partial<ConnectionOptions>, stream: string) {
  const nc = await connect({ servers: `127.0.0.1:${server.port}`, ...auth });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

function emit(cwd: string, bus: string, env: Env) {
  return worker(["emit", "--kind", "fact", "--text", "a team note", "--json"], {
    cwd,
    env: { ENGRAM_BUS: bus, ...env },
  });
}

describe.skipIf(skipNats)("a NATS bus that requires a credential", () => {
  it("without one is exit 2 naming the bus and what to set, and nothing is spooled", async () => {
    const repo = await repoWithStream("AUTHNONE");
    const r = await emit(repo.dir, withUser.url, {});
    expect(r.code, describeResult(r)).toBe(EXIT.usage);
    expect(r.stderr).toContain(withUser.url);
    expect(r.stderr).toContain("refused the credential");
    expect(r.stderr).toContain("ENGRAM_NATS_USER");
    expect(r.stderr).toContain("nothing was sent or spooled");
    expect(spooled(repo.dir)).toEqual([]);
  });

  it("a user and password from the environment deliver; a wrong password is exit 2", async () => {
    const repo = await repoWithStream("AUTHUSER");
    const ok = jsonOf<{ transport: string; spooled: boolean }>(
      await emit(repo.dir, withUser.url, {
        ENGRAM_NATS_USER: "team",
        ENGRAM_NATS_PASSWORD: PASSWORD,
      }),
    );
    expect(ok).toMatchObject({ transport: "nats", spooled: false });
    expect(await storedIn(withUser, { user: "team", pass: PASSWORD }, "AUTHUSER")).toBe(1);

    const wrong = await emit(repo.dir, withUser.url, {
      ENGRAM_NATS_USER: "team",
      ENGRAM_NATS_PASSWORD: "a guess",
    });
    expect(wrong.code, describeResult(wrong)).toBe(EXIT.usage);
    expect(wrong.stderr).toContain(
      "refused the credential of ENGRAM_NATS_USER/ENGRAM_NATS_PASSWORD",
    );
    expect(wrong.stderr).not.toContain("a guess");
    expect(spooled(repo.dir)).toEqual([]);
    expect(await storedIn(withUser, { user: "team", pass: PASSWORD }, "AUTHUSER")).toBe(1);
  });

  it("a credential denied permission to publish is exit 2 at once, nothing spooled", async () => {
    const repo = await repoWithStream("AUTHPERM");
    const r = await emit(repo.dir, withPermissions.url, {
      ENGRAM_NATS_USER: "reader",
      ENGRAM_NATS_PASSWORD: PASSWORD,
    });
    expect(r.code, describeResult(r)).toBe(EXIT.usage);
    expect(r.stderr).toContain("denied the credential of ENGRAM_NATS_USER/ENGRAM_NATS_PASSWORD");
    expect(r.stderr).toContain("Permissions Violation for Publish");
    expect(r.stderr).toContain("not sent or spooled");
    expect(spooled(repo.dir)).toEqual([]);
  });

  it("a token from the environment delivers", async () => {
    const repo = await repoWithStream("AUTHTOKEN");
    const ok = jsonOf<{ spooled: boolean }>(
      await emit(repo.dir, withToken.url, { ENGRAM_NATS_TOKEN: TOKEN }),
    );
    expect(ok.spooled).toBe(false);
    expect(await storedIn(withToken, { token: TOKEN }, "AUTHTOKEN")).toBe(1);
  });

  it("a credential in the URL is refused (config or environment) without echoing it", async () => {
    const repo = await repoWithStream("AUTHURL");
    const inUrl = `nats://team:${PASSWORD}@127.0.0.1:${withUser.port}`;
    const fromEnv = await emit(repo.dir, inUrl, {});
    repo.writeConfig(
      tomlConfig({ "agent_bus.nats": { stream: "AUTHURL" }, worker: { bus: inUrl } }),
    );
    const fromConfig = await worker(["emit", "--kind", "fact", "--text", "a team note"], {
      cwd: repo.dir,
    });
    for (const r of [fromEnv, fromConfig]) {
      expect(r.code, describeResult(r)).toBe(EXIT.usage);
      expect(r.stderr).toContain("a bus URL carries no credential");
      expect(r.stderr).not.toContain(PASSWORD);
    }
    expect(spooled(repo.dir)).toEqual([]);
  });

  it("half a user and password, two credentials or a bad creds file is exit 2 naming it", async () => {
    const repo = await repoWithStream("AUTHHALF");
    const half = await emit(repo.dir, withUser.url, { ENGRAM_NATS_USER: "team" });
    expect(half.code, describeResult(half)).toBe(EXIT.usage);
    expect(half.stderr).toContain("ENGRAM_NATS_PASSWORD is not set");
    const two = await emit(repo.dir, withUser.url, {
      ENGRAM_NATS_TOKEN: TOKEN,
      ENGRAM_NATS_CREDS: "/nonexistent.creds",
    });
    expect(two.code, describeResult(two)).toBe(EXIT.usage);
    expect(two.stderr).toContain("ENGRAM_NATS_TOKEN and ENGRAM_NATS_CREDS");
    const notCreds = repo.path("team.creds");
    writeFileSync(notCreds, "not a credentials file\n");
    const bad = await emit(repo.dir, withUser.url, { ENGRAM_NATS_CREDS: notCreds });
    expect(bad.code, describeResult(bad)).toBe(EXIT.usage);
    expect(bad.stderr).toContain(`ENGRAM_NATS_CREDS ${notCreds}: not a NATS credentials file`);
    expect(spooled(repo.dir)).toEqual([]);
  });

  it("a Director drains with the environment's credential, never to a host its config names unallowed", async () => {
    const repo = await repoWithStream("AUTHDRAIN");
    repo.writeConfig(
      tomlConfig({
        "agent_bus.nats": { stream: "AUTHDRAIN", subject_prefix: "authdrain.events" },
        worker: { bus: withUser.url },
      }),
    );
    const team = { ENGRAM_NATS_USER: "team", ENGRAM_NATS_PASSWORD: PASSWORD };
    const sent = jsonOf<{ spooled: boolean; event_id: string }>(
      await worker(["emit", "--kind", "fact", "--text", "a drained note", "--json"], {
        cwd: repo.dir,
        env: team,
      }),
    );
    expect(sent.spooled).toBe(false);
    type Run = { sources: { source: string; accepted: number; error?: string }[] };
    const run = (env: Env) => director(["run", "--json"], { cwd: repo.dir, env });

    // The config names the host; without the environment's leave it gets no credential.
    const withheld = await run({ ...team, ENGRAM_ALLOW_HOSTS: undefined });
    const refused = (JSON.parse(withheld.stdout) as Run).sources[0];
    expect(refused?.accepted, describeResult(withheld)).toBe(0);
    expect(refused?.error).toContain(
      `ENGRAM_NATS_USER/ENGRAM_NATS_PASSWORD was not given to 127.0.0.1:${withUser.port}`,
    );
    expect(refused?.error).toContain("ENGRAM_ALLOW_HOSTS");

    const drained = jsonOf<Run>(await run(team));
    expect(drained.sources).toEqual([
      expect.objectContaining({ source: withUser.url, accepted: 1 }),
    ]);
    // A source the user names (--bus) gets the credential without the host allowed.
    const ingest = await director(["ingest", "--bus", withUser.url, "--json"], {
      cwd: repo.dir,
      env: { ...team, ENGRAM_ALLOW_HOSTS: undefined },
    });
    expect(ingest.code, describeResult(ingest)).toBe(0);
  });
});
