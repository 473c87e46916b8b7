import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/**
 * The SDK's stdio transport, answering a line it cannot read as JSON-RPC requires: the SDK
 * only reports such a line to `onerror` and the client waits for an answer that never
 * comes. Not JSON is -32700 (Parse error); JSON that is not a JSON-RPC message is -32600
 * (Invalid Request). The id is unknown in both cases, so it is null.
 */
export function stdioTransport(): StdioServerTransport {
  const transport = new StdioServerTransport();
  transport.onerror = (error: unknown) => {
    const code = replyCode(error);
    if (code === undefined) return;
    const message =
      code === ErrorCode.ParseError
        ? "Parse error: the line is not JSON (one JSON-RPC message per line)"
        : `Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (${firstIssue(error)})`;
    transport
      .send({ jsonrpc: "2.0", id: null, error: { code, message } } as never)
      .catch(() => undefined);
  };
  return transport;
}

function replyCode(error: unknown): number | undefined {
  if (error instanceof SyntaxError) return ErrorCode.ParseError;
  if (error instanceof Error && error.name === "ZodError") return ErrorCode.InvalidRequest;
  // Anything else (stdin failed, a line over the buffer limit) closes the transport.
  return undefined;
}

function firstIssue(error: unknown): string {
  const issues = (error as { issues?: { message?: string }[] }).issues;
  return issues?.[0]?.message?.slice(0, 200) ?? "unrecognized message";
}
