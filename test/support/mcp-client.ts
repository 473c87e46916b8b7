import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";
import {
  childEnv,
  director,
  type Env,
  type Spawned,
  spawnBin,
  WORKER_BIN,
  worker,
} from "./bins.js";
import type { TempDirs, TempRepo } from "./repo.js";

/** The SDK client connected to `worker mcp` over stdio, in the repository `dir`. */
export async function stdioMcpClient(dir: string, env: Env): Promise<Client> {
  const client = new Client({ name: "engram-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [WORKER_BIN, "mcp", "--repo", dir],
      env: childEnv(env) as Record<string, string>,
      stderr: "pipe",
    }),
  );
  return client;
}

/** The SDK client connected to a `worker mcp --http` server at `address`. */
export async function httpMcpClient(address: string): Promise<Client> {
  const client = new Client({ name: "engram-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://${address}/mcp`)));
  return client;
}

/** Starts `worker mcp --http 127.0.0.1:0 ...extra` and reads its first line. */
export async function httpMcpServer(
  dir: string,
  env: Env,
  extra: readonly string[] = [],
): Promise<{ child: Spawned; address: string }> {
  const child = spawnBin(
    WORKER_BIN,
    ["mcp", "--http", "127.0.0.1:0", "--repo", dir, "--json", ...extra],
    { cwd: dir, env },
  );
  const lines = createInterface({ input: child.child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.done.then((r) => reject(new Error(`worker mcp exited ${r.code}: ${r.stderr}`)));
  });
  return { child, address: (JSON.parse(first) as { listening: string }).listening };
}

/** A repository with a few notes compacted into engrams by a real `director run`. */
export async function memoryRepo(dirs: TempDirs, env: Env): Promise<TempRepo> {
  const repo = dirs.repo();
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  expect((await director(["init", "--repo", repo.dir], { cwd: repo.dir, env })).code).toBe(0);
  const notes: [string, string, string][] = [
    ["decision", "Use zod for every schema", "schema"],
    ["lesson", "Run the filesystem tests in forked workers", "testing"],
  ];
  for (const [kind, text, topic] of notes) {
    const args = ["emit", "--repo", repo.dir, "--kind", kind, "--text", text, "--topic", topic];
    expect((await worker(args, { cwd: repo.dir, env })).code).toBe(0);
  }
  const run = await director(["run", "--force", "--repo", repo.dir], { cwd: repo.dir, env });
  expect(run.code, run.stderr).toBe(0);
  return repo;
}
