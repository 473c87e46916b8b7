/*
 * The MCP server's tools and resources by name, without loading the SDK: `worker --help`
 * lists them from here, and a test checks them against what the server lists.
 */

export const TOOL_NAMES = [
  "memory_recall",
  "memory_context",
  "memory_freshness",
  "memory_emit",
  "memory_status",
  "memory_sync",
  "memory_learnings",
  "memory_confirm",
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

export const RESOURCE_URIS = [
  "engram://MEMORY.md",
  "engram://catalog.json",
  "engram://engrams/{engram_id}",
] as const;
