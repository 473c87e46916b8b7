import type { Config } from "../../schema/config.js";

/**
 * The config keys that decide where credentials and memory go (hosts, databases, groups,
 * nodes), which secret is sent, what is redacted, which files are read or written, how
 * MEMORY.md is written, and which branch the Director writes (docs/security.md). A
 * pull request that changes one is reported by `director guard`: a maintainer reads it,
 * because the destinations' rules (src/core/trust/destinations.ts) may let it through on a
 * machine whose environment allows that host or variable.
 */
export const SECURITY_KEYS: readonly string[] = [
  "github.repository",
  "github.api_url",
  "github.base_branch",
  "github.head_branch",
  "sync.default_privacy",
  "sync.notion.base_url",
  "sync.notion.token_env",
  "sync.tana.endpoint",
  "sync.tana.token_env",
  "sync.tana.local_api_url",
  "sync.tana.local_token_env",
  "sync.notion.parent_page_id",
  "sync.notion.databases",
  "sync.graphiti.url",
  "sync.graphiti.groups",
  "sync.tana.target_node_id",
  "sync.tana.workspace_id",
  "redaction.patterns",
  "memory.memory_md_update_cadence",
  "sources.markdown.folders",
  "sources.markdown.privacy",
  "agent_bus.sources",
  "worker.bus",
  "state.dir",
];

export interface SecurityChange {
  key: string;
  before: unknown;
  after: unknown;
}

function valueAt(config: Config, key: string): unknown {
  let at: unknown = config;
  for (const part of key.split(".")) {
    at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[part] : undefined;
  }
  return at;
}

/** The security keys whose value differs between two configs (defaults applied to both). */
export function securityChanges(before: Config, after: Config): SecurityChange[] {
  const out: SecurityChange[] = [];
  for (const key of SECURITY_KEYS) {
    const a = valueAt(before, key);
    const b = valueAt(after, key);
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ key, before: a, after: b });
  }
  return out;
}

/** Folder paths of `[[sources.markdown.folders]]` that leave the repository (absolute, or `..`). */
export function foldersOutside(config: Config): string[] {
  return config.sources.markdown.folders
    .map((f) => f.path)
    .filter((p) => {
      if (p.startsWith("/") || p.startsWith("\\") || /^[A-Za-z]:/.test(p) || p.startsWith("~")) {
        return true;
      }
      let depth = 0;
      for (const part of p.split(/[/\\]+/)) {
        if (part === "..") depth--;
        else if (part !== "." && part !== "") depth++;
        if (depth < 0) return true;
      }
      return false;
    });
}
