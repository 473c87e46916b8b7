import { execFile } from "node:child_process";
import * as fs from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHILD_SAFETY_MS, childEnv, ROOT, type Spawned } from "../support/bins.js";
import { httpMcpServer, memoryRepo } from "../support/mcp-client.js";
import { TempDirs } from "../support/repo.js";

/*
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios,
 * active suite) against `worker mcp --http`. The suite exits non-zero on a failure that
 * test/mcp/conformance-expected-failures.yml does not list (with its reason), and on a
 * listed one that passes. `npm run conformance` runs this file alone.
 */

const SUITE = join(
  ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "conformance",
  "dist",
  "index.js",
);
const BASELINE = join(ROOT, "test", "mcp", "conformance-expected-failures.yml");
// The suite imports fs.globSync (Node 22+) for a command `server` never runs: on Node 20 a
// loader hook supplies it (test/support/conformance-node20.mjs).
const NODE_ARGS =
  typeof (fs as Record<string, unknown>).globSync === "function"
    ? []
    : ["--import", join(ROOT, "test", "support", "conformance-node20.mjs")];

/** Every scenario of a capability engram declares that needs no fixture of the suite's. */
const MUST_PASS = [
  "server-initialize",
  "ping",
  "tools-list",
  "resources-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

const dirs = new TempDirs();
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };
let server: { child: Spawned; address: string };

beforeAll(async () => {
  const repo = await memoryRepo(dirs, ENV);
  server = await httpMcpServer(repo.dir, ENV);
});

afterAll(async () => {
  server.child.child.kill("SIGTERM");
  await server.child.done;
  dirs.cleanup();
});

describe("the MCP conformance suite", () => {
  it("passes every scenario of engram's capabilities, and fails only the listed ones", async () => {
    const args = [...NODE_ARGS, SUITE, "server", "--url", `http://${server.address}/mcp`];
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [...args, "--expected-failures", BASELINE],
        {
          cwd: ROOT,
          env: childEnv({ NO_COLOR: "1" }),
          timeout: CHILD_SAFETY_MS,
          maxBuffer: 1 << 24,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
          resolve({ code, stdout, stderr });
        },
      );
    });
    expect(r.code, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`).toBe(0);
    expect(r.stdout).toMatch(/Baseline check passed/);
    for (const scenario of MUST_PASS) {
      expect(r.stdout, scenario).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
  });
});
