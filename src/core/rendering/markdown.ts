import { truncateChars } from "../model/text.js";

/**
 * Helpers for Markdown that GitHub renders from text we do not control (facts, topics, branch
 * names): escaped so that it cannot break a table row, open an HTML tag or comment, make a
 * link, or mention a user or team.
 */

// Line breaks and separators of every kind, and the other C0/C1 controls: one space each.
// biome-ignore lint/suspicious/noControlCharactersInRegex: controls are exactly what is matched
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
// Bidirectional overrides and isolates can make a fact read as something else: dropped.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// Markdown punctuation that could start emphasis, code, a link or escape the next character.
const MARKDOWN = /[\\`*_~[\]|]/g;
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/**
 * One line of inert Markdown text: no line breaks, no HTML, no link or emphasis syntax, no
 * `|` that ends a table cell, no `@mention` (a zero-width space follows each `@`). Clipped to
 * `maxChars` code points first, so the result is at most 5 × `maxChars` + a few characters.
 */
export function inlineText(text: string, maxChars: number): string {
  const flat = String(text).replace(BIDI, "").replace(BREAKS, " ").trim();
  return clip(flat, maxChars)
    .replace(/[&<>]/g, (c) => ENTITIES[c] as string)
    .replace(MARKDOWN, (c) => `\\${c}`)
    .replace(/@/g, "@\u200b");
}

/**
 * Text for inside a code span: flattened and clipped. Backticks and `|` become `'`; `<` and `>`
 * become `‹` and `›`, because an HTML tag outranks a code span in CommonMark and entities do
 * not decode inside one.
 */
export function codeText(text: string, maxChars: number): string {
  const flat = String(text).replace(BIDI, "").replace(BREAKS, " ").trim();
  return truncateChars(flat, maxChars).replace(/[`|]/g, "'").replace(/</g, "‹").replace(/>/g, "›");
}

/**
 * `truncateChars` without splitting a whole 8,000-character fact into code points: the first
 * `maxChars` code points lie within the first 2 × `maxChars` code units.
 */
function clip(text: string, maxChars: number): string {
  const max = Math.max(1, maxChars);
  return truncateChars(text.length > 2 * max + 2 ? text.slice(0, 2 * max + 2) : text, max);
}

/** A code span that is safe in a table cell. */
export function code(text: string, maxChars = 120): string {
  const inner = codeText(text, maxChars);
  return inner === "" ? "" : `\`${inner}\``;
}

/**
 * A URL for a Markdown link destination: characters that would end the destination, break the
 * row or start HTML are percent-encoded; anything not http(s) or relative is refused.
 */
export function linkTarget(url: string): string | undefined {
  const trimmed = String(url).trim();
  if (trimmed === "" || trimmed.length > 2000) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^https?:\/\//i.test(trimmed)) return undefined;
  // Everything but printable ASCII is encoded too: no Unicode space can end the destination.
  return trimmed.replace(/[^\x21-\x7e]|["'()<>[\\\]`|]/gu, percent);
}

/** `c` as UTF-8 percent escapes, including the characters encodeURIComponent leaves alone. */
function percent(c: string): string {
  // A lone surrogate has no UTF-8 form: it becomes U+FFFD, as a browser would send it.
  if (/^[\ud800-\udfff]$/.test(c)) return "%EF%BF%BD";
  return encodeURIComponent(c).replace(
    /[!'()*]/g,
    (x) => `%${x.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** Digits grouped by commas, locale-free: `1,048,576`. Non-finite numbers print as `?`. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return "?";
  const rounded = Math.round(n);
  const sign = rounded < 0 ? "-" : "";
  const digits = String(Math.abs(rounded));
  if (digits.includes("e")) return `${sign}${digits}`;
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `used` as a percentage of `max` with one decimal, or `n/a` without a budget. */
export function formatPercent(used: number, max: number): string {
  if (!Number.isFinite(used) || !Number.isFinite(max) || max <= 0) return "n/a";
  const tenths = Math.round((used * 1000) / max);
  if (!Number.isFinite(tenths) || Math.abs(tenths) >= 1e7) return "n/a";
  return `${(tenths / 10).toFixed(1)}%`;
}

/** `n thing` or `n things`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
