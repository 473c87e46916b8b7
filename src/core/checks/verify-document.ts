import type { z } from "zod";
import { cutText } from "../model/text.js";
import type { FindingCode } from "./findings.js";

/** How a check reports a finding. */
export type Add = (path: string, code: FindingCode, message: string) => void;
export type Raw = Record<string, unknown>;

const MAX_SCHEMA_ISSUES = 20;
const MAX_SHOWN_CHARS = 120;

interface HashedDocumentRules<T> {
  path: string;
  schema: z.ZodType<T>;
  serialize: (raw: unknown) => string;
  hashOf: (raw: Record<string, unknown>) => string;
  invalid: FindingCode;
  notCanonical: FindingCode;
  hash: FindingCode;
}

/**
 * What the catalog and every engram share: valid JSON, written in canonical form, valid
 * against its schema, and a `hash` equal to its recomputed content hash. Undefined when
 * there is no object to check further.
 */
export function checkHashedDocument<T>(
  text: string,
  rules: HashedDocumentRules<T>,
  add: Add,
):
  | {
      raw: Record<string, unknown>;
      result: ReturnType<z.ZodType<T>["safeParse"]>;
      recomputed: string | undefined;
    }
  | undefined {
  const parsed = parseJson(text);
  if (!parsed.ok) {
    add(rules.path, rules.invalid, `is not valid JSON: ${parsed.error}`);
    return undefined;
  }
  const raw = parsed.value;
  checkCanonicalForm(text, () => rules.serialize(raw), rules.path, rules.notCanonical, add);
  const result = rules.schema.safeParse(raw);
  if (!result.success) reportIssues(rules.path, rules.invalid, result.error.issues, add);
  if (!isRecord(raw)) return undefined;

  const recomputed = attempt(() => rules.hashOf(raw));
  if (!recomputed.ok) {
    add(rules.path, rules.hash, `content hash cannot be computed: ${recomputed.error}`);
    return { raw, result, recomputed: undefined };
  }
  if (typeof raw.hash === "string" && raw.hash !== recomputed.value) {
    add(
      rules.path,
      rules.hash,
      `hash ${show(raw.hash)} does not match its content (recomputed ${recomputed.value})`,
    );
  }
  return { raw, result, recomputed: recomputed.value };
}

function checkCanonicalForm(
  text: string,
  serialize: () => string,
  path: string,
  code: FindingCode,
  add: Add,
): void {
  const expected = attempt(serialize);
  if (!expected.ok) {
    add(path, code, `cannot be re-serialized: ${expected.error}`);
    return;
  }
  if (expected.value === text) return;
  add(
    path,
    code,
    `is not in canonical form (2-space pretty JSON, one trailing newline): first difference at ${firstDifference(text, expected.value)}`,
  );
}

function reportIssues(
  path: string,
  code: FindingCode,
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  add: Add,
): void {
  for (const issue of issues.slice(0, MAX_SCHEMA_ISSUES)) {
    add(path, code, `${issuePath(issue.path)}: ${issue.message}`);
  }
  if (issues.length > MAX_SCHEMA_ISSUES) {
    add(path, code, `${issues.length - MAX_SCHEMA_ISSUES} more schema issues not shown`);
  }
}

function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return show(out, false);
}

function firstDifference(actual: string, expected: string): string {
  const n = Math.min(actual.length, expected.length);
  let i = 0;
  while (i < n && actual.charCodeAt(i) === expected.charCodeAt(i)) i++;
  let line = 1;
  let column = 1;
  for (let k = 0; k < i; k++) {
    if (actual.charCodeAt(k) === 10) {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return `line ${line} column ${column}`;
}

export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: errorText(error) };
  }
}

// Deep nesting or non-finite numbers (1e999) make hashing or serializing throw.
export function attempt<T>(run: () => T): { ok: true; value: T } | { ok: false; error: string } {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, error: errorText(error) };
  }
}

function errorText(error: unknown): string {
  return truncate(error instanceof Error ? error.message : String(error));
}

export function isRecord(value: unknown): value is Raw {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Plain when a simple token, JSON otherwise, always short: hostile values stay readable.
export function show(value: unknown, quote = true): string {
  if (typeof value === "string" && (!quote || /^[\w:./+-]+$/.test(value))) return truncate(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? "[…]" : typeof value === "object" ? "{…}" : String(value);
  }
  return truncate(text);
}

function truncate(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${cutText(text, MAX_SHOWN_CHARS)}…` : text;
}
