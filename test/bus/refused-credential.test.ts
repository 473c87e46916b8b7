/**
 * A `git:` bus whose server refuses the credential (issue 36): a remote over HTTP that answers
 * git's smart-HTTP requests with 401 and a Basic challenge. With no credential to give (no
 * helper, prompts off) and with a wrong one, `worker emit` is exit 2 naming the bus and saying
 * the credential was refused, and nothing is spooled: a retry would fail the same way.
 */
import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/errors.js";
import { assertBuilt, describeResult, director, worker } from "../support/bins.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
// No user or system config (so no credential helper), and git never prompts.
const GIT_ENV = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: undefined,
  SSH_ASKPASS: undefined,
};
const PASSWORD = "wrong-secret-4711";
let server: Server;
let base: string;
let asked = 0;

beforeAll(async () => {
  assertBuilt();
  server = createServer((req, res) => {
    asked++;
    req.resume();
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="engram test"' });
    res.end("credential refused\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  dirs.cleanup();
});

async function checkout(remoteUrl: string): Promise<string> {
  const repo = dirs.repo("engram-refused-credential-");
  const init = await director(["init"], { cwd: repo.dir });
  expect(init.code, describeResult(init)).toBe(0);
  git(repo.dir, ["remote", "add", "team", remoteUrl]);
  return repo.dir;
}

/** The spool's files (none when the folder is missing). */
function spooled(cwd: string): string[] {
  const spool = join(cwd, ".engram", "spool");
  return existsSync(spool) ? readdirSync(spool) : [];
}

describe("a git: bus that refuses the credential", () => {
  for (const [name, url] of [
    ["no credential to give", () => `${base}/team.git`],
    [
      "a wrong credential",
      () => `${base.replace("http://", `http://agent:${PASSWORD}@`)}/team.git`,
    ],
  ] as const) {
    it(`is exit 2 naming the bus, nothing spooled: ${name}`, async () => {
      const dir = await checkout(url());
      const before = asked;
      const r = await worker(["emit", "--kind", "fact", "--text", "a refused note", "--json"], {
        cwd: dir,
        env: { ...GIT_ENV, ENGRAM_BUS: "git:team" },
      });
      expect(r.code, describeResult(r)).toBe(EXIT.usage);
      expect(asked).toBeGreaterThan(before);
      expect(r.stderr).toContain("git:team");
      expect(r.stderr).toContain("refused the credential");
      expect(r.stderr).toContain("nothing was sent or spooled");
      expect(r.stderr).not.toContain(PASSWORD);
      expect(r.stdout).not.toContain(PASSWORD);
      expect(spooled(dir)).toEqual([]);
    });
  }
});
