import { parse, TomlError } from "smol-toml";
import { z } from "zod";
import { nearest } from "../core/model/nearest.js";
import type { ConfigProblem } from "../errors.js";
import { Config } from "../schema/config.js";
import { type KeyLocator, keyLocator, type Segment } from "./locate.js";
import { crossFieldProblems, fail, keyName } from "./rules.js";

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
