import { cutText, wellFormed } from "./text.js";

/*
 * One-line fields built from input (topics, link refs, entity keys, issue refs, kinds): what
 * they may hold, spelled once, so the worker that refuses a flag, the Director that
 * normalizes an envelope and the writer that checks a file before it lands all agree.
 */

/**
 * Characters a one-line field never holds: C0 controls (line breaks and tabs among them),
 * DEL, C1 controls, the Unicode line and paragraph separators, and lone surrogates (which
 * no UTF-8 file can hold).
 */
const NOT_ONE_LINE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are exactly what is matched
  /[\u0000-\u001F\u007F-\u009F\u2028\u2029]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_ONE_LINE_RUNS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are exactly what is matched
  /(?:[\s\u0000-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])+/g;

const NAMES: Record<number, string> = {
  9: "a tab",
  10: "a line break",
  13: "a carriage return",
  8232: "a line separator",
  8233: "a paragraph separator",
};

/**
 * Why `text` is not a one-line value (`"a line break (U+000A) at character 12"`), or
 * undefined when it is one.
 */
export function notOneLine(text: string): string | undefined {
  const m = NOT_ONE_LINE.exec(text);
  if (m === null) return undefined;
  const code = m[0].charCodeAt(0);
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  const what =
    NAMES[code] ?? (code >= 0xd800 && code <= 0xdfff ? "a lone surrogate" : "a control character");
  return `${what} (U+${hex}) at character ${m.index + 1}`;
}

/**
 * `text` as one line: every run of whitespace, control characters and lone surrogates
 * becomes one space, then the ends are trimmed.
 */
export function oneLine(text: string): string {
  return text.replace(NOT_ONE_LINE_RUNS, " ").trim();
}

/** Longest topic, in UTF-16 units (the envelope's `Topic`). */
export const MAX_TOPIC_UNITS = 64;

/** A topic as memory keeps it: one line, lower case, at most 64 units; "" when nothing is left. */
export function normalizeTopic(text: string): string {
  return cutText(oneLine(text), MAX_TOPIC_UNITS).trimEnd();
}

/** Longest link ref (the `Link` schema). */
export const MAX_LINK_REF_UNITS = 512;

/**
 * Why a link ref cannot be kept as given (a link is one line of at most 512 units, not
 * empty), or undefined when it can.
 */
export function linkRefProblem(ref: string): string | undefined {
  const trimmed = ref.trim();
  if (trimmed.length === 0) return "a link is empty";
  const broken = notOneLine(trimmed);
  if (broken !== undefined) return `a link is one line: this one holds ${broken}`;
  if (trimmed.length > MAX_LINK_REF_UNITS) {
    return `a link is at most ${MAX_LINK_REF_UNITS} characters: this one has ${trimmed.length}`;
  }
  return undefined;
}

/** The kinds an entity id names in a memory file (the engram schema's `EntityRef`). */
export const DOCUMENT_ENTITY_KINDS = [
  "person",
  "project",
  "component",
  "file",
  "issue",
  "pr",
  "commit",
] as const;

/** Longest entity key after `kind:` (the schema's `EntityRef`: `\S.{0,499}`). */
export const MAX_ENTITY_KEY_UNITS = 500;

/** What the engram schema's `EntityRef` accepts, checked without zod. */
export const ENTITY_REF_PATTERN = /^(?:person|project|component|file|issue|pr|commit):\S.{0,499}$/;

/**
 * The entity id `kind:key`, or undefined when `key` cannot make one a reader accepts: the
 * key is made one line and well formed, and one longer than 500 units names nothing (a cut
 * path would name another file). `url:` ids are built alike, though memory files leave them
 * in their links.
 */
export function entityId(kind: string, key: string): string | undefined {
  const clean = oneLine(wellFormed(key).text);
  if (clean.length === 0 || clean.length > MAX_ENTITY_KEY_UNITS) return undefined;
  return `${kind}:${clean}`;
}

/** Whether `id` is an entity id a memory file may carry (the schema's `EntityRef`). */
export function isDocumentEntityId(id: string): boolean {
  return ENTITY_REF_PATTERN.test(id) && notOneLine(id) === undefined;
}

/**
 * A JSON value with every lone surrogate in its strings and keys replaced by U+FFFD: a
 * document built from it can be written as UTF-8 and hashed the RFC 8785 way. Other values
 * are returned as they are.
 */
export function wellFormedValue(value: unknown): unknown {
  if (typeof value === "string") return wellFormed(value).text;
  if (Array.isArray(value)) return value.map(wellFormedValue);
  if (value !== null && typeof value === "object") {
    // fromEntries defines properties, so a `__proto__` key stays a plain key.
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        wellFormed(k).text,
        wellFormedValue(v),
      ]),
    );
  }
  return value;
}
