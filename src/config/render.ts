import { z } from "zod";
import { Config } from "../schema/config.js";

/** The subset of JSON Schema that `z.toJSONSchema(Config)` produces and we read. */
interface SchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  examples?: unknown[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

// Sections, and the keys the schema leaves undescribed, get their comment here. Texts in the
// schema (`.describe()`) win, so adding one there needs no change here.
const NOTES: Record<string, string> = {
  memory:
    "Budgets of the event buffer, the ST and LT tiers, one engram and MEMORY.md; compaction and promotion policy.",
  agent_bus: "The agent bus: message size limit and worker heartbeats.",
  "policy.sync_main":
    "When the Director tells a worker to sync with main (sync_required.v1), judged from the main_ancestor_sha and catalog_hash_seen of its hellos and heartbeats.",
  "policy.sync_main.max_commits_behind":
    "A worker whose main ancestor is more than this many commits behind main must sync.",
  "policy.sync_main.max_seconds_behind":
    "A worker whose main ancestor is older than main by more than this many seconds must sync.",
  "policy.sync_main.require_catalog_hash_match":
    "A worker whose catalog_hash_seen differs from the catalog on main must sync.",
  github:
    "GitHub: the repository, branches, labels and reviewers of the memory pull request. Without a token (GITHUB_TOKEN) and a repository the Director works without GitHub.",
  redaction: "Secret redaction, applied to every event before anything is written.",
  quarantine:
    "Rejected input lines: their disk budget (two rotated generations; what is dropped is counted).",
  state: "Local state that is never committed.",
  sync: "What memory sends to external stores (surprise-driven policy), the queue's schedule and privacy. Private items never leave.",
  "sync.notion":
    "The Notion target. The token is read from the environment variable named by token_env, never from this file.",
  sessions:
    "Sandbox sessions: the budget of one session buffer and the rules that consolidate an ended session.",
};

const WIDTH = 92;

/**
 * The commented `config/dev.toml` that `director init` writes: every section and key with
 * its default value and its `.describe()` text as a comment above it. Deterministic.
 */
export function renderDefaultConfig(): string {
  const schema = z.toJSONSchema(Config, { io: "input" }) as SchemaNode;
  const out: string[] = [
    "# engram configuration.",
    "#",
    "# Every key is optional: the values below are the defaults. Unknown sections or keys,",
    "# wrong types and out-of-range values are errors. Reference: docs/configuration.md;",
    "# JSON Schema for editors: docs/schema/config.schema.json (both in the engram package).",
  ];
  renderTable([], schema, out);
  return `${out.join("\n")}\n`;
}

function renderTable(at: string[], node: SchemaNode, out: string[]): void {
  const entries = Object.entries(node.properties ?? {});
  const scalars = entries.filter(([, child]) => child.type !== "object");
  const tables = entries.filter(([, child]) => child.type === "object");
  // A table with only sub-tables (`[policy]`) needs no header of its own.
  if (at.length > 0 && (scalars.length > 0 || tables.length === 0)) {
    const name = at.join(".");
    out.push("");
    comment(node.description ?? NOTES[name], out);
    out.push(`[${name}]`);
    for (const [key, child] of scalars) {
      out.push("");
      comment(child.description ?? NOTES[`${name}.${key}`], out);
      if (child.enum !== undefined) {
        comment(`One of: ${child.enum.map((v) => tomlValue(v)).join(", ")}.`, out);
      }
      // A list of tables is written as `[[name.key]]` tables by whoever adds one; an inline
      // `key = []` here would collide with them (TOML: a key defined twice), so it is a comment.
      if (child.type === "array" && child.items?.type === "object") {
        out.push(`# [[${name}.${key}]]   (none by default; add one such table per entry)`);
      } else if (child.default === undefined)
        out.push(`# ${key} = ${tomlValue(child.examples?.[0])}`);
      else out.push(`${key} = ${tomlValue(child.default)}`);
    }
  }
  for (const [key, child] of tables) renderTable([...at, key], child, out);
}

function comment(text: string | undefined, out: string[]): void {
  if (text === undefined) return;
  let line = "#";
  for (const word of text.split(/\s+/)) {
    if (line.length > 1 && line.length + 1 + word.length > WIDTH) {
      out.push(line);
      line = "#";
    }
    line += ` ${word}`;
  }
  out.push(line);
}

function tomlValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v); // JSON escapes are valid TOML escapes
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    // Digit groups make byte budgets readable: 33_554_432.
    if (Number.isSafeInteger(v) && Math.abs(v) >= 10_000) {
      return String(v).replace(/\B(?=(\d{3})+$)/g, "_");
    }
    return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(", ")}]`;
  throw new Error(`renderDefaultConfig: no TOML form for default ${JSON.stringify(v)}`);
}
