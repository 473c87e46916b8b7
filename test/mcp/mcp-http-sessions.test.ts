import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type HttpServeSummary, serveMcpHttp } from "../../src/mcp/http.js";
import { worker } from "../support/bins.js";
import { httpMcpClient, httpMcpServer, memoryRepo } from "../support/mcp-client.js";
import { TempDirs } from "../support/repo.js";

/*
 * HTTP sessions are bounded: a cap on open ones (503 over it), idle expiry on a clock the
 * test moves (no waiting), and DELETE closes one at once.
 */

interface Running {
  address: string;
  /** Moves the server's clock forward. */
  advance(ms: number): void;
  stop(): Promise<HttpServeSummary>;
}

const running: Running[] = [];
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const r of running.splice(0)) await r.stop();
});

/** serveMcpHttp in this process, with a tiny server and a clock the test moves. */
async function serve(options: { maxSessions?: number; sessionIdleMs?: number }): Promise<Running> {
  let now = 1_000_000;
  const stop = new AbortController();
  let listened: (address: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => {
    listened = resolve;
  });
  const done = serveMcpHttp({
    host: "127.0.0.1",
    port: 0,
    newServer: () => {
      const server = new McpServer({ name: "t", version: "1" });
      server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: "text", text }],
      }));
      return server;
    },
    stop: stop.signal,
    onListening: (address) => listened(address),
    now: () => now,
    ...options,
  });
  const r: Running = {
    address: await listening,
    advance(ms) {
      now += ms;
    },
    stop() {
      stop.abort("test");
      return done;
    },
  };
  running.push(r);
  return r;
}

async function connect(address: string): Promise<Client> {
  const client = new Client({ name: "t", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://${address}/mcp`)));
  clients.push(client);
  return client;
}

const echo = (client: Client) => client.callTool({ name: "echo", arguments: { text: "hi" } });

describe("streamable HTTP sessions", () => {
  it("refuses a session over the cap with 503, and takes one again after a DELETE", async () => {
    const server = await serve({ maxSessions: 2 });
    const a = await connect(server.address);
    await connect(server.address);
    await expect(connect(server.address)).rejects.toThrow(/503|too many MCP sessions/);

    const transport = a.transport as StreamableHTTPClientTransport;
    const closedId = transport.sessionId;
    await transport.terminateSession();
    // The deleted session is gone: its id gets 404, and its slot is free again.
    const gone = await fetch(`http://${server.address}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": String(closedId),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(gone.status).toBe(404);
    const c = await connect(server.address);
    expect((await echo(c)).isError).toBeFalsy();
    const summary = await server.stop();
    running.length = 0;
    expect(summary).toMatchObject({ sessions: 3, refused: 1, expired: 0 });
  });

  it("closes a session idle past the limit, and keeps one in use", async () => {
    const server = await serve({ sessionIdleMs: 60_000 });
    const idle = await connect(server.address);
    const busy = await connect(server.address);
    server.advance(40_000);
    expect((await echo(busy)).isError).toBeFalsy();
    server.advance(30_000);
    // 70 s since `idle` was used, 30 s since `busy` was: only `idle` has expired.
    await expect(echo(idle)).rejects.toThrow(/404|Session not found/);
    expect((await echo(busy)).isError).toBeFalsy();
    // An expired session frees its slot: a new client gets a new session.
    const again = await connect(server.address);
    expect((await echo(again)).isError).toBeFalsy();
    const summary = await server.stop();
    running.length = 0;
    expect(summary.expired).toBe(1);
  });
});

describe("worker mcp --http session flags", () => {
  it("applies --max-sessions, and refuses bad values", async () => {
    const dirs = new TempDirs();
    const env = { SOURCE_DATE_EPOCH: "1790000000" };
    try {
      const repo = await memoryRepo(dirs, env);
      const bad = await worker(["mcp", "--http", "127.0.0.1:0", "--max-sessions", "0"], {
        cwd: repo.dir,
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--max-sessions/);
      const stdio = await worker(["mcp", "--session-idle", "60"], { cwd: repo.dir });
      expect(stdio.code).toBe(2);
      const { child, address } = await httpMcpServer(repo.dir, env, ["--max-sessions", "1"]);
      try {
        const first = await httpMcpClient(address);
        await expect(httpMcpClient(address)).rejects.toThrow(/503|too many MCP sessions/);
        await first.close();
      } finally {
        child.child.kill("SIGTERM");
      }
      const done = await child.done;
      expect(JSON.parse(done.stdout.trim().split("\n").at(-1)!)).toMatchObject({ refused: 1 });
    } finally {
      dirs.cleanup();
    }
  });
});
