import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse, TomlError } from "smol-toml";
import { z } from "zod";
import { createRedactor, RedactionPatternError } from "../core/ingest/redact.js";
import { nearest } from "../core/model/nearest.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { Config, defaultConfig } from "../schema/config.js";
import { type KeyLocator, keyLocator, type Segment } from "./locate.js";

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file that was (or would have been) read. */
  path: string;
  /** False when the default file is missing and `config` is the defaults. */
  exists: boolean;
}

/**
 * Reads and validates the config. `configPath` defaults to `<repoDir>/config/dev.toml`; a
 * missing default file gives the defaults (exists: false); a missing explicit --config file
 * is a ConfigError. A relative `configPath` is resolved against the current directory and
 * shown as given in messages.
 */
export async function loadConfig(repoDir: string, configPath?: string): Promise<LoadedConfig> {
  const explicit = configPath !== undefined;
  const abs = explicit
    ? path.resolve(configPath)
    : path.join(path.resolve(repoDir), "config", "dev.toml");
  const display = explicit ? configPath : path.join("config", "dev.toml");
  let text: string;
  try {
    text = await readFile(abs, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !explicit)
      return { config: defaultConfig(), path: abs, exists: false };
    const why =
      code === "ENOENT" ? "config file not found" : `cannot read config file (${code ?? err})`;
    throw new ConfigError(`${display}: ${why}`, display, [{ key: "", message: why }], {
      cause: err,
    });
  }
  return { config: parseConfigText(text, display), path: abs, exists: true };
}

/** Pure: validates TOML text; throws ConfigError. `file` is the name used in messages. */
export function parseConfigText(text: string, file: string): Config {
  // Editors on Windows may save a BOM, which TOML does not allow.
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let raw: Record<string, unknown>;
  try {
    raw = parse(source) as Record<string, unknown>;
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const what = (err.message.split("\n")[0] ?? "").replace(/^Invalid TOML document:\s*/, "");
    fail(file, [
      { key: "", line: err.line, message: `TOML syntax error: ${what} (column ${err.column})` },
    ]);
  }
  const locate = keyLocator(source);
  const result = Config.safeParse(raw);
  const problems: ConfigProblem[] = [];
  let config: Config | undefined;
  const bad: string[] = [];
  if (result.success) {
    config = result.data;
  } else {
    for (const issue of result.error.issues) {
      problems.push(...issueProblems(issue, raw, locate));
      bad.push(...badKeys(issue));
    }
    // Check the cross-field rules on what is valid too, so one run reports everything.
    const retry = Config.safeParse(withoutKeys(raw, bad));
    if (retry.success) config = retry.data;
  }
  if (config !== undefined) problems.push(...crossFieldProblems(config, bad, locate));
  if (problems.length > 0) fail(file, problems);
  return config as Config;
}

function fail(file: string, problems: ConfigProblem[]): never {
  // Stable sort: file order first, problems without a line last.
  const order = (p: ConfigProblem): number => p.line ?? Number.MAX_SAFE_INTEGER;
  const sorted = [...problems].sort((a, b) => order(a) - order(b));
  const lines = sorted.map((p) => {
    const where = p.line === undefined ? file : `${file}:${p.line}`;
    return p.key === "" ? `${where}: ${p.message}` : `${where}: ${p.key}: ${p.message}`;
  });
  throw new ConfigError(lines.join("\n"), file, sorted);
}

// ---------------------------------------------------------------------------------------
// Schema issues -> problems

/** The subset of JSON Schema that `z.toJSONSchema(Config)` produces and we read. */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

let schemaCache: SchemaNode | undefined;
function configSchema(): SchemaNode {
  schemaCache ??= z.toJSONSchema(Config, { io: "input" }) as SchemaNode;
  return schemaCache;
}

function schemaAt(segments: readonly Segment[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = configSchema();
  for (const s of segments) {
    node = typeof s === "number" ? node?.items : node?.properties?.[s];
  }
  return node;
}

function valueAt(raw: unknown, segments: readonly Segment[]): unknown {
  let v = raw;
  for (const s of segments) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<Segment, unknown>)[s];
  }
  return v;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function toSegments(p: readonly PropertyKey[]): Segment[] {
  return p.map((s) => (typeof s === "number" ? s : String(s)));
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** `memory.buffer_max_bytes`, `redaction.patterns[2]`; odd keys are quoted as in TOML. */
function keyName(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else out += (out === "" ? "" : ".") + (BARE_KEY.test(s) ? s : JSON.stringify(s));
  }
  return out;
}

// Issues about a value, which the schema of its key explains better than zod's wording.
const VALUE_ISSUES = new Set([
  "invalid_type",
  "too_small",
  "too_big",
  "invalid_value",
  "not_multiple_of",
]);

function issueProblems(issue: z.core.$ZodIssue, raw: unknown, locate: KeyLocator): ConfigProblem[] {
  const at = toSegments(issue.path);
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((k) => {
      const full = [...at, k];
      const kind = isTable(valueAt(raw, full)) ? "section" : "key";
      return {
        key: keyName(full),
        line: locate(full).line,
        message: `unknown ${kind}${suggestion(at, k)}`,
      };
    });
  }
  const node = schemaAt(at);
  const message =
    node !== undefined && VALUE_ISSUES.has(issue.code)
      ? `expected ${expectation(node)}, got ${shown(valueAt(raw, at))}`
      : issue.message;
  return [{ key: keyName(at), line: locate(at).line, message }];
}

/** What a value must look like, in words, from the JSON Schema of its key. */
function expectation(node: SchemaNode): string {
  if (node.enum !== undefined)
    return `one of ${node.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  switch (node.type) {
    case "boolean":
      return "true or false";
    case "string":
      return "a string";
    case "object":
      return "a table";
    case "array":
      return node.items === undefined ? "an array" : `an array of ${plural(node.items)}`;
    case "integer":
    case "number":
      return numberExpectation(node);
    default:
      return "a valid value";
  }
}

function plural(node: SchemaNode): string {
  const one = expectation(node);
  if (one === "a string") return "strings";
  if (one === "a table") return "tables";
  return `values that are each ${one}`;
}

function numberExpectation(node: SchemaNode): string {
  const integer = node.type === "integer";
  const base = integer ? "an integer" : "a number";
  // zod writes Number.MAX_SAFE_INTEGER as the maximum of every integer: not worth saying.
  const max = node.maximum === Number.MAX_SAFE_INTEGER ? undefined : node.maximum;
  const { minimum: min, exclusiveMinimum: xmin, exclusiveMaximum: xmax } = node;
  if (max === undefined && xmax === undefined) {
    if (xmin === 0 && min === undefined)
      return integer ? "a positive integer" : "a positive number";
    if (min === 0 && xmin === undefined) return `a non-negative ${integer ? "integer" : "number"}`;
  }
  if (min !== undefined && max !== undefined) return `${base} from ${min} to ${max}`;
  const parts: string[] = [];
  if (xmin !== undefined) parts.push(`greater than ${xmin}`);
  if (min !== undefined) parts.push(`at least ${min}`);
  if (xmax !== undefined) parts.push(`less than ${xmax}`);
  if (max !== undefined) parts.push(`at most ${max}`);
  return parts.length === 0 ? base : `${base} ${parts.join(" and ")}`;
}

/** How a TOML value is shown after "got". */
function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    return String(v);
  }
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  // smol-toml's TomlDate prints the TOML form (a date, a time or both) from toISOString.
  if (v instanceof Date) return `a date or time (${v.toISOString()})`;
  if (Array.isArray(v)) return "an array";
  if (isTable(v)) return "a table";
  return "nothing";
}

function suggestion(table: readonly Segment[], key: string): string {
  const known = Object.keys(schemaAt(table)?.properties ?? {});
  const best = nearest(key, known);
  if (best !== undefined) return ` (did you mean ${best}?)`;
  // A right key in the wrong section is a likely slip.
  const home = sectionsWithKey(key).filter((s) => s !== keyName(table));
  if (home.length > 0) return ` (${key} belongs in [${home.join("] or [")}])`;
  return known.length > 0 ? ` (known: ${known.join(", ")})` : "";
}

function sectionsWithKey(key: string): string[] {
  const out: string[] = [];
  const walk = (node: SchemaNode, at: string[]): void => {
    for (const [k, child] of Object.entries(node.properties ?? {})) {
      if (k === key && at.length > 0) out.push(at.join("."));
      if (child.type === "object") walk(child, [...at, k]);
    }
  };
  walk(configSchema(), []);
  return out;
}

/** Dotted keys an issue makes unusable; array elements taint the whole array. */
function badKeys(issue: z.core.$ZodIssue): string[] {
  const at = toSegments(issue.path);
  const cut = at.findIndex((s) => typeof s === "number");
  const key = (cut < 0 ? at : at.slice(0, cut)) as string[];
  if (issue.code === "unrecognized_keys") return issue.keys.map((k) => [...key, k].join("."));
  return [key.join(".")];
}

function withoutKeys(raw: Record<string, unknown>, keys: readonly string[]): unknown {
  const copy = structuredClone(raw);
  for (const key of keys) {
    const segments = key === "" ? [] : key.split(".");
    const last = segments.pop();
    const parent = valueAt(copy, segments);
    if (last === undefined) return {};
    if (isTable(parent)) delete parent[last];
  }
  return copy;
}

// ---------------------------------------------------------------------------------------
// Cross-field rules

interface RuleProblem {
  /** The keys involved, most relevant first; the first one set in the file is reported. */
  keys: string[];
  message: string;
}

function crossFieldProblems(
  c: Config,
  bad: readonly string[],
  locate: KeyLocator,
): ConfigProblem[] {
  const m = c.memory;
  const found: RuleProblem[] = [];
  const rule = (keys: string[], broken: boolean, message: () => string): void => {
    // A rule over a key that already has a problem would only repeat it with a default.
    const tainted = keys.some((k) => bad.some((b) => b === "" || k === b || k.startsWith(`${b}.`)));
    if (broken && !tainted) found.push({ keys, message: message() });
  };

  rule(
    ["memory.buffer_keep_recent_events", "memory.buffer_max_events"],
    m.buffer_keep_recent_events >= m.buffer_max_events,
    () =>
      `memory.buffer_keep_recent_events (${m.buffer_keep_recent_events}) must be less than ` +
      `memory.buffer_max_events (${m.buffer_max_events}): compaction never touches the newest ` +
      "window, so a window that large would leave it nothing to take",
  );
  rule(
    ["memory.buffer_low_water_ratio", "memory.buffer_high_water_ratio"],
    m.buffer_low_water_ratio >= m.buffer_high_water_ratio,
    () =>
      `memory.buffer_low_water_ratio (${m.buffer_low_water_ratio}) must be less than ` +
      `memory.buffer_high_water_ratio (${m.buffer_high_water_ratio}): compaction starts above ` +
      "the high-water mark and stops at the low-water mark",
  );
  const window = m.buffer_keep_recent_events * c.agent_bus.max_message_bytes;
  const room = m.buffer_max_bytes * m.buffer_low_water_ratio;
  rule(
    [
      "memory.buffer_keep_recent_events",
      "agent_bus.max_message_bytes",
      "memory.buffer_max_bytes",
      "memory.buffer_low_water_ratio",
    ],
    window > room,
    () =>
      "memory.buffer_keep_recent_events * agent_bus.max_message_bytes " +
      `(${m.buffer_keep_recent_events} * ${c.agent_bus.max_message_bytes} = ${num(window)}) ` +
      "must be at most memory.buffer_max_bytes * memory.buffer_low_water_ratio " +
      `(${m.buffer_max_bytes} * ${m.buffer_low_water_ratio} = ${num(room)}): otherwise the ` +
      "newest window, which compaction never touches, could alone exceed the buffer's byte " +
      "budget, and compacting only the oldest events (invariant 3) and staying within the " +
      "budget (invariant 4) could not both hold",
  );
  for (const tier of ["st", "lt"] as const) {
    const total = tier === "st" ? m.st_max_total_bytes : m.lt_max_total_bytes;
    rule(
      ["memory.engram_max_bytes", `memory.${tier}_max_total_bytes`],
      m.engram_max_bytes > total,
      () =>
        `memory.engram_max_bytes (${m.engram_max_bytes}) must be at most ` +
        `memory.${tier}_max_total_bytes (${total}): one engram must fit in the ${tier.toUpperCase()} tier`,
    );
  }
  rule(
    ["memory.memory_md_max_bytes"],
    m.memory_md_max_bytes < 1024,
    () =>
      `memory.memory_md_max_bytes (${m.memory_md_max_bytes}) must be at least 1024: ` +
      "MEMORY.md needs room for its header and a few items",
  );
  const nats = c.agent_bus.nats;
  rule(
    ["agent_bus.nats.duplicate_window_seconds", "agent_bus.nats.max_age_seconds"],
    nats.duplicate_window_seconds > nats.max_age_seconds,
    () =>
      `agent_bus.nats.duplicate_window_seconds (${nats.duplicate_window_seconds}) must be at ` +
      `most agent_bus.nats.max_age_seconds (${nats.max_age_seconds}): JetStream refuses a ` +
      "stream whose duplicate window outlasts its messages",
  );
  c.redaction.patterns.forEach((pattern, i) => {
    const why = patternProblem(pattern);
    rule(
      [`redaction.patterns[${i}]`],
      why !== undefined,
      () => `${JSON.stringify(pattern)}: ${why}`,
    );
  });

  return found.map(({ keys, message }) => {
    const segments = keys.map(splitKey);
    const exact = segments.find((s) => locate(s).exact);
    const chosen = exact ?? segments[0]!;
    return { key: keyName(chosen), line: locate(chosen).line, message };
  });
}

/** Asks the redactor itself, so that a config that loads never fails when the redactor is built. */
function patternProblem(pattern: string): string | undefined {
  try {
    createRedactor([pattern]);
    return undefined;
  } catch (err) {
    if (!(err instanceof RedactionPatternError)) throw err;
    const prefix = `redaction.patterns[0] ${JSON.stringify(pattern)}: `;
    return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  }
}

function splitKey(key: string): Segment[] {
  const out: Segment[] = [];
  for (const part of key.split(".")) {
    const m = /^(.*)\[(\d+)\]$/.exec(part);
    if (m) out.push(m[1]!, Number(m[2]));
    else out.push(part);
  }
  return out;
}

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(6)));
}
