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

export interface HttpServeOptions {
  host: string;
  port: number;
  /** A new MCP server for each session. */
  newServer: () => McpServer;
  stop: AbortSignal;
  onListening: (address: string) => void;
}

export interface HttpServeSummary {
  stopped_by: string;
  sessions: number;
  refused: number;
}

/**
 * Serves MCP over streamable HTTP, one session (and one McpServer) per client. Host and
 * Origin are checked on every request, so a web page cannot reach the server through DNS
 * rebinding; only this machine's names for the listening address are accepted.
 */
export async function serveMcpHttp(options: HttpServeOptions): Promise<HttpServeSummary> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let opened = 0;
  let refused = 0;
  let allowedHosts: string[] = [];

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
    const sessionId = headerValue(req.headers["mcp-session-id"]);
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) {
      const body = req.method === "POST" ? await readJson(req, res) : undefined;
      if (body === INVALID) return;
      await existing.handleRequest(req, res, body);
      return;
    }
    if (sessionId !== undefined) {
      jsonError(res, 404, -32001, "Session not found");
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
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        opened++;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await options.newServer().connect(transport);
    await transport.handleRequest(req, res, body);
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
  for (const transport of sessions.values()) await transport.close().catch(() => undefined);
  await new Promise<void>((resolveClose) => {
    http.close(() => resolveClose());
    http.closeAllConnections();
  });
  return { stopped_by: stoppedBy, sessions: opened, refused };
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
