import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/** The MCP endpoint's path; clients connect to `http://HOST:PORT/mcp`. */
export const MCP_PATH = "/mcp";
// A JSON-RPC request to this server is small; refuse anything larger before parsing it.
const MAX_BODY_BYTES = 1024 * 1024;
/** Sessions open at once by default: each costs about 185 KB (an McpServer and its transport). */
export const DEFAULT_MAX_SESSIONS = 100;
/** A session nobody used for this long is closed by default (15 minutes). */
export const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;

export interface HttpServeOptions {
  host: string;
  port: number;
  /** A new MCP server for each session. */
  newServer: () => McpServer;
  stop: AbortSignal;
  onListening: (address: string) => void;
  /** Most sessions open at once; a new one over it is refused with 503 (default 100). */
  maxSessions?: number | undefined;
  /** A session idle this long (ms, no request in flight) is closed (default 30 minutes). */
  sessionIdleMs?: number | undefined;
  /** The clock for idle expiry, in ms: tests move it instead of waiting. */
  now?: () => number;
}

export interface HttpServeSummary {
  stopped_by: string;
  /** Sessions opened. */
  sessions: number;
  refused: number;
  /** Sessions closed for being idle. */
  expired: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
  /** Requests in flight (a GET stream aside): a session with one never expires. */
  busy: number;
  closing: boolean;
}

/**
 * Serves MCP over streamable HTTP, one session (and one McpServer) per client. Host and
 * Origin are checked on every request, so a web page cannot reach the server through DNS
 * rebinding; only this machine's names for the listening address are accepted.
 */
export async function serveMcpHttp(options: HttpServeOptions): Promise<HttpServeSummary> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const now = options.now ?? Date.now;
  let opening = 0;
  let opened = 0;
  let refused = 0;
  let expired = 0;
  let allowedHosts: string[] = [];

  /** Closes every session idle for `idleMs` or more (closing removes it from the map). */
  async function sweep(): Promise<void> {
    const at = now();
    const stale = [...sessions.values()].filter(
      (s) => !s.closing && s.busy === 0 && at - s.lastUsed >= idleMs,
    );
    for (const session of stale) {
      session.closing = true;
      expired++;
      await session.transport.close().catch(() => undefined);
    }
  }
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) jsonError(res, 500, -32603, `internal error: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://placeholder");
    if (url.pathname !== MCP_PATH && url.pathname !== `${MCP_PATH}/`) {
      jsonError(res, 404, -32000, `not found: the MCP endpoint is ${MCP_PATH}`);
      return;
    }
    const host = req.headers.host ?? "";
    if (!allowedHosts.includes(host)) {
      refused++;
      jsonError(res, 403, -32000, `Invalid Host header: ${host}`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts.some((h) => origin === `http://${h}`)) {
      refused++;
      jsonError(res, 403, -32000, `Invalid Origin header: ${origin}`);
      return;
    }
    await sweep();
    const sessionId = headerValue(req.headers["mcp-session-id"]);
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) {
      existing.lastUsed = now();
      // A call in progress keeps its session; an open GET stream alone does not: a client
      // that only listens has not used its session, and it closes with the session.
      if (req.method !== "GET") {
        existing.busy++;
        res.once("close", () => {
          existing.busy--;
          existing.lastUsed = now();
        });
      }
      const body = req.method === "POST" ? await readJson(req, res) : undefined;
      if (body === INVALID) return;
      await existing.transport.handleRequest(req, res, body);
      return;
    }
    if (sessionId !== undefined) {
      jsonError(
        res,
        404,
        -32001,
        `Session not found: it was closed (DELETE) or idle for ${idleMs / 1000} s; initialize a new one`,
      );
      return;
    }
    if (req.method !== "POST") {
      jsonError(res, 400, -32000, "Mcp-Session-Id header is required");
      return;
    }
    const body = await readJson(req, res);
    if (body === INVALID) return;
    if (!isInitializeRequest(body)) {
      jsonError(res, 400, -32000, "Mcp-Session-Id header is required");
      return;
    }
    if (sessions.size + opening >= maxSessions) {
      refused++;
      res.setHeader("retry-after", String(Math.ceil(Math.min(idleMs, 60_000) / 1000)));
      jsonError(
        res,
        503,
        -32000,
        `too many MCP sessions open (${maxSessions}, --max-sessions): close one (DELETE /mcp with its Mcp-Session-Id) or wait until one has been idle for ${idleMs / 1000} s`,
      );
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, lastUsed: now(), busy: 0, closing: false });
        opened++;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    opening++;
    try {
      await options.newServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      opening--;
    }
  }

  await new Promise<void>((resolveListen, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => {
      http.off("error", reject);
      resolveListen();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const port = address.port;
  allowedHosts = [...new Set([`${shown}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`])];
  if (address.address === "::1") allowedHosts.push(`[::1]:${port}`);
  // Idle sessions are also closed on every request, so an injected clock needs no timer.
  const sweeper = setInterval(() => void sweep(), Math.max(1000, Math.min(idleMs, 60_000)));
  sweeper.unref();
  options.onListening(`${shown}:${port}`);

  const stoppedBy = await new Promise<string>((resolveStop) => {
    if (options.stop.aborted) resolveStop(String(options.stop.reason ?? "stop"));
    options.stop.addEventListener(
      "abort",
      () => resolveStop(String(options.stop.reason ?? "stop")),
      {
        once: true,
      },
    );
  });
  clearInterval(sweeper);
  for (const session of [...sessions.values()]) {
    await session.transport.close().catch(() => undefined);
  }
  await new Promise<void>((resolveClose) => {
    http.close(() => resolveClose());
    http.closeAllConnections();
  });
  return { stopped_by: stoppedBy, sessions: opened, refused, expired };
}

const INVALID = Symbol("invalid");

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).byteLength;
    if (size > MAX_BODY_BYTES) {
      jsonError(res, 413, -32000, `request body over ${MAX_BODY_BYTES} bytes`);
      req.destroy();
      return INVALID;
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    jsonError(res, 400, -32700, "Parse error: the body is not JSON");
    return INVALID;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
