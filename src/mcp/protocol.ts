import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { guarded } from "./tool-result.js";

/*
 * How engram's MCP server answers bad input, by the protocol (MCP 2025-11-25):
 * - an unknown tool is a protocol error, -32602 (the spec's "Unknown tool" example);
 * - arguments that fail a tool's input schema are a tool execution error (`isError: true`,
 *   SEP-1303), so the model reads which field is wrong and can correct its call;
 * - an unknown resource is -32002 ("Resource not found");
 * - a line that is not JSON is -32700, JSON that is not a JSON-RPC message -32600.
 */

/** MCP's code for a resource that does not exist (spec: server/resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error the SDK sends as it is: its `code`, `message` and `data`. (The SDK's own
 * `McpError` prefixes "MCP error <code>:" to its message, which then shows up twice.)
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

/** A zod failure as one line per issue, each naming its field: `text: too long (...)`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const field = issue.path.map(String).join(".");
      if (issue.code === "unrecognized_keys") {
        return `${issue.keys.map((k) => (field ? `${field}.${k}` : k)).join(", ")}: unknown field${issue.keys.length > 1 ? "s" : ""}`;
      }
      return `${field || "arguments"}: ${issue.message}`;
    })
    .join("; ");
}

/** One tool: its schemas (published and enforced, the same objects) and its body. */
export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations?: Record<string, boolean>;
  run: (input: z.infer<I>) => Promise<CallToolResult>;
}

/**
 * Registers the tools, then answers `tools/call` itself: the SDK's handler would turn an
 * unknown tool into a tool result and prefix its validation messages with "MCP error
 * -32602", and this one validates with the very zod object `tools/list` publishes.
 */
export function serveTools(
  server: McpServer,
  // biome-ignore lint/suspicious/noExplicitAny: a list of tools with different schemas
  tools: readonly ToolSpec<any, any>[],
): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: tool.annotations,
      },
      (input: unknown) => tool.run(input),
    );
  }
  server.server.removeRequestHandler("tools/call");
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const tool = byName.get(name);
    if (tool === undefined) {
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${name.slice(0, 100)} (tools: ${[...byName.keys()].join(", ")})`,
      );
    }
    const parsed = tool.input.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      return {
        isError: true,
        content: [
          { type: "text", text: `${name}: invalid arguments: ${describeIssues(parsed.error)}` },
        ],
      };
    }
    const result = await guarded(() => tool.run(parsed.data));
    if (result.isError !== true) {
      const checked = tool.output.safeParse(result.structuredContent);
      // The answer breaks the tool's own published contract: a bug here, not the caller's.
      if (!checked.success) {
        throw new ProtocolError(
          ErrorCode.InternalError,
          `${name} produced an answer outside its output schema: ${describeIssues(checked.error)}`,
        );
      }
    }
    return result;
  });
}
