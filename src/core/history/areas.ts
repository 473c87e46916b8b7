/** The area of the tree a commit touches, and its top folders (topics of its envelope). */
import { truncateChars } from "../model/text.js";

const MAX_TOPICS = 32;
const MAX_TOPIC_CHARS = 64;

/** Folders that hold one project each: their second level names the area. */
const CONTAINERS = new Set([
  "packages",
  "apps",
  "libs",
  "crates",
  "modules",
  "plugins",
  "services",
]);

/** The registry's projects and components (`component:<id>`, `project:<id>`) covering a file. */
export type AreasOf = (file: string) => readonly string[];

/**
 * The area of the tree a commit touches: the registry component (else project) covering most
 * of its files when `areasOf` is given and covers any; otherwise the top folder holding most
 * of them (`packages/x` inside a monorepo's container folder), or `(root)` for top-level
 * files only.
 */
export function areaOf(files: readonly string[], areasOf?: AreasOf): string {
  if (areasOf) {
    for (const kind of ["component:", "project:"]) {
      const counts = new Map<string, number>();
      for (const file of files) {
        for (const id of areasOf(file)) {
          if (id.startsWith(kind))
            counts.set(id.slice(kind.length), (counts.get(id.slice(kind.length)) ?? 0) + 1);
        }
      }
      const best = mostCommon(counts);
      if (best !== undefined) return truncateChars(best.toLowerCase(), MAX_TOPIC_CHARS);
    }
  }
  const counts = new Map<string, number>();
  for (const file of files) {
    const parts = file.toLowerCase().split("/");
    if (parts.length < 2) continue;
    const top = parts[0] as string;
    const area = CONTAINERS.has(top) && parts.length > 2 ? `${top}/${parts[1]}` : top;
    counts.set(area, (counts.get(area) ?? 0) + 1);
  }
  const best = mostCommon(counts);
  return best !== undefined ? truncateChars(best, MAX_TOPIC_CHARS) : "(root)";
}

function mostCommon(counts: ReadonlyMap<string, number>): string | undefined {
  let best: [string, number] | undefined;
  for (const entry of counts) {
    if (!best || entry[1] > best[1] || (entry[1] === best[1] && entry[0] < best[0])) best = entry;
  }
  return best?.[0];
}

/** Top-level folders of the paths, most files first (the first is the engram group). */
export function topFolders(files: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const file of files) {
    const cut = file.indexOf("/");
    if (cut <= 0) continue;
    const folder = truncateChars(file.slice(0, cut).toLowerCase(), MAX_TOPIC_CHARS);
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([folder]) => folder)
    .slice(0, MAX_TOPICS);
}
