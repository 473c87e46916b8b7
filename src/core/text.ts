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
