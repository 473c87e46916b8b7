import type { RepoContext } from "../context/repo-context.js";
import { UsageError } from "../errors.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";

/** A memory item a note replaces: the id the user gave, the text memory holds. */
export interface SupersededItem {
  id: string;
  text: string;
}

/** Most items one note replaces (the envelope's limit). */
export const MAX_SUPERSEDES = 8;

/** `e_` and 8 to 32 hex digits (MEMORY.md shows 8), then `#d<n>` (a decision) or `#f<n>` (a fact). */
const NOTE_ID = /^(e_[0-9a-f]{8,32})#([df])(\d{1,5})$/;

/**
 * The items of memory that note ids name, read from this checkout's memory tree: each id as
 * `worker recall --json` shows it (`e_<32 hex>#d0`), or with the engram id cut to the 8 hex
 * digits MEMORY.md links show. An id that names nothing is a usage error that says so.
 */
export async function resolveSupersedes(
  ctx: RepoContext,
  ids: readonly string[],
  field = "--supersedes",
): Promise<SupersededItem[]> {
  if (ids.length === 0) return [];
  if (ids.length > MAX_SUPERSEDES) {
    throw new UsageError(`${field}: at most ${MAX_SUPERSEDES} items a note`);
  }
  const catalog = await readCatalog(ctx.repoDir);
  const out: SupersededItem[] = [];
  for (const id of ids) {
    const m = NOTE_ID.exec(id.trim());
    if (!m) {
      throw new UsageError(
        `${field} ${id}: expected a note id such as e_0123abcd…#d0 (a decision) or #f2 (a fact), as worker recall --json shows it`,
      );
    }
    const [, prefix = "", list, index] = m;
    const entries = catalog.entries.filter((e) => e.engram_id.startsWith(prefix));
    if (entries.length !== 1) {
      throw new UsageError(
        entries.length === 0
          ? `${field} ${id}: no engram ${prefix} in memory/catalog.json (run worker sync, or take the id from worker recall --json)`
          : `${field} ${id}: ${entries.length} engrams start with ${prefix}: give more of its id`,
      );
    }
    const entry = entries[0] as (typeof entries)[number];
    const engram = (await loadEngrams(ctx.repoDir, [entry])).get(entry.engram_id);
    const n = Number(index);
    const text = list === "d" ? engram?.decisions[n]?.title : engram?.facts[n];
    if (text === undefined) {
      throw new UsageError(
        `${field} ${id}: ${entry.engram_id} has no ${list === "d" ? "decision" : "fact"} ${n}`,
      );
    }
    out.push({ id: `${entry.engram_id}#${list}${n}`, text });
  }
  return out;
}
