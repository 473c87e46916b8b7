import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { EngramError } from "../errors.js";

/** A tool's answer with its structured content, and the same JSON as text for older clients. */
export function structured<T extends Record<string, unknown>>(value: T): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value,
  };
}

/** Runs a tool body; any failure becomes a tool result with `isError`, so the server goes on. */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    const message =
      error instanceof EngramError
        ? error.message
        : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    return { isError: true, content: [{ type: "text", text: message }] };
  }
}
