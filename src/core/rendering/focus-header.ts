/**
 * The marker line MEMORY.md carries, so a reader (and `director verify`) can tell which
 * catalog the focus view was generated from.
 */
export const FOCUS_TITLE = "# Memory: current focus";

export function focusMarker(catalogVersion: number, catalogHash: string): string {
  return `<!-- engram: generated from memory/catalog.json version ${catalogVersion} hash ${catalogHash}; do not edit, the Director regenerates this file -->`;
}

const MARKER =
  /^<!-- engram: generated from memory\/catalog\.json version (\d+) hash (sha256:[0-9a-f]{64});/m;

export function parseFocusMarker(
  text: string,
): { catalog_version: number; catalog_hash: string } | undefined {
  const m = MARKER.exec(text);
  if (!m) return undefined;
  return { catalog_version: Number(m[1]), catalog_hash: m[2] as string };
}

/** Items are the bullet lines of MEMORY.md; `memory_md_max_items` bounds them. */
export function countFocusItems(text: string): number {
  let count = 0;
  for (const line of text.split("\n")) if (line.startsWith("- ")) count++;
  return count;
}
