import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { SyncTargetError } from "./target.js";

export interface GraphitiClientOptions {
  url: string;
  timeoutMs: number;
  retries: number;
  /** First backoff delay; doubled on each retry. */
  backoffMs?: number;
}

/**
 * A Graphiti MCP server through the official SDK client over streamable HTTP (sessions, SSE
 * bodies and protocol versions are the SDK's business). One connection per instance, opened
 * on first use and re-opened after a transport failure.
 */
export class GraphitiClient {
  private client: Client | null = null;
  private readonly backoffMs: number;

  constructor(private readonly options: GraphitiClientOptions) {
    this.backoffMs = options.backoffMs ?? 500;
  }

  /**
   * Calls a tool, retrying transient failures; a `{"error": ...}` result is a failure. A call
   * that is not `idempotent` (`add_memory`) is retried only when it never reached the server
   * (the connection could not be opened): after that its outcome is unknown.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    timeoutMs?: number,
    options: { idempotent?: boolean } = {},
  ): Promise<unknown> {
    let attempt = 0;
    for (;;) {
      const progress = { sent: false };
      try {
        return await this.callOnce(name, args, timeoutMs ?? this.options.timeoutMs, progress);
      } catch (error) {
        const failure = classify(error, this.options.url);
        const transient = failure.kind === "unavailable" || failure.kind === "rate_limited";
        if (
          !transient ||
          attempt >= this.options.retries ||
          failure.message.includes("legacy SSE") ||
          (options.idempotent === false && progress.sent)
        ) {
          throw failure;
        }
        await this.reset();
        await sleep(this.backoffMs * 2 ** attempt);
        attempt++;
      }
    }
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private async callOnce(
    name: string,
    args: Record<string, unknown>,
    timeout: number,
    progress: { sent: boolean },
  ) {
    const client = await this.connect(timeout);
    progress.sent = true;
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout });
    const value = toolValue(result);
    const said =
      value !== null && typeof value === "object" && "error" in value
        ? String((value as { error: unknown }).error)
        : null;
    if (result.isError === true || said !== null) {
      const message = `graphiti ${name}: ${said ?? errorText(value)}`;
      // An error result is a failure, retried, unless it says the input itself is wrong.
      throw new SyncTargetError(message, PERMANENT.test(message) ? "validation" : "unavailable");
    }
    return value;
  }

  private async connect(timeout: number): Promise<Client> {
    if (this.client !== null) return this.client;
    const client = new Client({ name: "engram-director", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(this.options.url));
    try {
      await client.connect(transport, { timeout });
    } catch (error) {
      await client.close().catch(() => undefined);
      if (await speaksLegacySse(this.options.url)) {
        throw new SyncTargetError(
          `${this.options.url}: the server speaks only the legacy SSE transport (Graphiti MCP before 1.0); run it with --transport http and set [sync.graphiti] url to its /mcp/ endpoint`,
          "unavailable",
          undefined,
          { cause: error },
        );
      }
      throw error;
    }
    this.client = client;
    return client;
  }

  private async reset(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client !== null) await client.close().catch(() => undefined);
  }
}

/**
 * Tool errors that no retry can fix: the input is wrong (Graphiti's group_id and name checks,
 * the SDK's schema validation). Anything else a server says in an error result is retried.
 */
const PERMANENT =
  /invalid group_id|must not be empty|input validation error|invalid arguments|unknown tool|not found: tool/i;

/** JSON-RPC errors about the request itself; others (internal error...) are retried. */
const PERMANENT_RPC: readonly number[] = [
  ErrorCode.InvalidParams,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.ParseError,
];

/** FastMCP wraps results as `structuredContent.result`, and also as JSON text content. */
function toolValue(result: Awaited<ReturnType<Client["callTool"]>>): unknown {
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  if (structured !== undefined) return "result" in structured ? structured.result : structured;
  const content = (result.content ?? []) as { type: string; text?: string }[];
  const text = content.find((c) => c.type === "text")?.text;
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorText(value: unknown): string {
  if (value !== null && typeof value === "object" && "error" in value) {
    return String((value as { error: unknown }).error);
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** What a failure means for the engine: wait and retry, or give up on the item. */
export function classify(error: unknown, url: string): SyncTargetError {
  if (error instanceof SyncTargetError) return error;
  const message = (error as Error)?.message ?? String(error);
  if (error instanceof StreamableHTTPError) {
    const code = error.code ?? 0;
    if (code === 429)
      return new SyncTargetError(message, "rate_limited", undefined, { cause: error });
    if (code === 401 || code === 403) {
      return new SyncTargetError(message, "auth", undefined, { cause: error });
    }
    if (code >= 500)
      return new SyncTargetError(message, "unavailable", undefined, { cause: error });
    return new SyncTargetError(`${url}: ${message}`, "unavailable", undefined, { cause: error });
  }
  if (error instanceof McpError && PERMANENT_RPC.includes(error.code)) {
    return new SyncTargetError(`graphiti: ${message}`, "validation", undefined, { cause: error });
  }
  // Timeouts, refused connections, resets, aborts: the server may be back on the next try.
  return new SyncTargetError(
    `graphiti at ${url}: ${describeNetwork(error)}`,
    "unavailable",
    undefined,
    {
      cause: error,
    },
  );
}

function describeNetwork(error: unknown): string {
  const cause = (error as { cause?: { code?: string } })?.cause;
  if (cause?.code === "ECONNREFUSED") return "connection refused (is the server running?)";
  return (error as Error)?.message ?? String(error);
}

/** Graphiti before 1.0 served `GET /sse` (an `endpoint` event) instead of streamable HTTP. */
async function speaksLegacySse(url: string): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 2000);
  try {
    const response = await fetch(new URL("/sse", url), {
      headers: { accept: "text/event-stream" },
      signal: controller.signal,
    });
    const sse =
      response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream");
    controller.abort();
    return sse;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
