/**
 * A NATS bus whose server refuses the worker (issue 36): a real nats-server that requires a
 * user and a password. `worker emit` connects without them, is refused, and is exit 2 naming
 * the bus and saying the credential was refused, with nothing spooled.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "../../bench/nats-server.js";
import { EXIT } from "../../src/errors.js";
import { assertBuilt, describeResult, director, worker } from "../support/bins.js";
import { NATS_INSTALL } from "../support/nats.js";
import { TempDirs } from "../support/repo.js";
import { binary, skipNats } from "./nats-harness.js";

const dirs = new TempDirs();
let server: NatsServer;

beforeAll(async () => {
  if (skipNats) return;
  assertBuilt();
  if (binary === undefined) throw new Error(`nats-server is not installed: ${NATS_INSTALL}`);
  server = await startNatsServer(dirs.dir("engram-nats-auth-store-"), binary, {
    args: ["--user", "director", "--pass", "only-the-director-knows"],
  });
});
afterAll(async () => {
  await server?.stop();
  dirs.cleanup();
});

describe.skipIf(skipNats)("a NATS bus that refuses the credential", () => {
  it("is exit 2 naming the bus, and nothing is spooled", async () => {
    const repo = dirs.repo("engram-nats-auth-");
    const init = await director(["init"], { cwd: repo.dir });
    expect(init.code, describeResult(init)).toBe(0);
    const r = await worker(["emit", "--kind", "fact", "--text", "a refused note", "--json"], {
      cwd: repo.dir,
      env: { ENGRAM_BUS: server.url },
    });
    expect(r.code, describeResult(r)).toBe(EXIT.usage);
    expect(r.stderr).toContain(server.url);
    expect(r.stderr).toContain("refused the credential");
    expect(r.stderr).toContain("nothing was sent or spooled");
    const spool = join(repo.dir, ".engram", "spool");
    expect(existsSync(spool) ? readdirSync(spool) : []).toEqual([]);
  });
});
