/**
 * Cuts `text` to at most `maxChars` code points, ending in `…` when cut; never splits a
 * surrogate pair.
 */
export function truncateChars(text: string, maxChars: number): string {
  const max = Math.max(1, maxChars);
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars
    .slice(0, max - 1)
    .join("")
    .trimEnd()}…`;
}

/** Longest fact, decision or sample an engram keeps, in characters. */
export const MAX_ITEM_CHARS = 1000;

export function clipItem(text: string): string {
  return truncateChars(text, MAX_ITEM_CHARS);
}

/** Plain code-unit order, the same on every machine (no locale). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
