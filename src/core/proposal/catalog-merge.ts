import type { Catalog, CatalogEntry, DocumentEntry } from "../../schema/engram.js";
import { sealCatalog } from "../model/engram.js";

export interface CatalogRebase {
  /** The rebased catalog: `onto` with the proposal's own changes replayed on it. */
  catalog: Catalog;
  /** Engrams the proposal added that `onto` lacks: their files come from the proposal. */
  carried: CatalogEntry[];
  /** Engrams the proposal added that were rejected (an earlier PR closed unmerged). */
  dropped: CatalogEntry[];
  /** Whether the result differs from `onto`. */
  changed: boolean;
}

/**
 * Replays a proposal's catalog changes on a newer catalog, as `git rebase` replays commits:
 * what the proposal added since `base` (and is not rejected) is added, what it removed is
 * removed, and everything `onto` changed meanwhile is kept. So a stale engram branch never
 * reverts newer memory on main, and events compacted into an unmerged proposal are carried
 * into the regenerated one instead of being lost. Engram ids derive from content, so the
 * same engram has the same id on every side.
 *
 * The version is one above every version seen, so `catalog_version` only ever grows.
 */
export function rebaseCatalog(input: {
  base: Catalog;
  proposal: Catalog;
  onto: Catalog;
  rejected?: ReadonlySet<string>;
  /** The sessions' documents of the result (see `mergeDocuments`); default: `onto`'s. */
  documents?: readonly DocumentEntry[];
}): CatalogRebase {
  const { base, proposal, onto } = input;
  const rejected = input.rejected ?? new Set<string>();
  const baseIds = new Set(base.entries.map((e) => e.engram_id));
  const proposalIds = new Set(proposal.entries.map((e) => e.engram_id));
  const ontoIds = new Set(onto.entries.map((e) => e.engram_id));

  const added = proposal.entries.filter((e) => !baseIds.has(e.engram_id));
  const removed = new Set(
    base.entries.filter((e) => !proposalIds.has(e.engram_id)).map((e) => e.engram_id),
  );
  const dropped = added.filter((e) => rejected.has(e.engram_id));
  const carried = added.filter((e) => !rejected.has(e.engram_id) && !ontoIds.has(e.engram_id));
  const kept = onto.entries.filter((e) => !removed.has(e.engram_id));
  const documents = input.documents ?? onto.documents ?? [];
  const changed =
    carried.length > 0 ||
    kept.length !== onto.entries.length ||
    !sameDocuments(documents, onto.documents);
  if (!changed) return { catalog: onto, carried, dropped, changed };
  // Nothing moved on either side since the proposal was made: it stands as it is.
  const entries = [...kept, ...carried];
  if (sameEntries(entries, proposal.entries) && sameDocuments(documents, proposal.documents)) {
    return { catalog: proposal, carried, dropped, changed };
  }

  const version =
    Math.max(base.catalog_version, proposal.catalog_version, onto.catalog_version) + 1;
  const createdAt = [base.created_at, proposal.created_at, onto.created_at].sort().at(-1);
  return {
    catalog: sealCatalog(version, createdAt as string, entries, documents),
    carried,
    dropped,
    changed,
  };
}

/** The engrams a proposal adds to its base: what a rejected PR marks as rejected. */
export function proposedEngramIds(base: Catalog, proposal: Catalog): string[] {
  const baseIds = new Set(base.entries.map((e) => e.engram_id));
  return proposal.entries
    .filter((e) => !baseIds.has(e.engram_id))
    .map((e) => e.engram_id)
    .sort();
}

function sameEntries(a: readonly CatalogEntry[], b: readonly CatalogEntry[]): boolean {
  if (a.length !== b.length) return false;
  const byId = new Map(b.map((e) => [e.engram_id, e]));
  return a.every((e) => {
    const other = byId.get(e.engram_id);
    return other !== undefined && other.path === e.path && other.hash === e.hash;
  });
}

function sameDocuments(
  a: readonly DocumentEntry[],
  b: readonly DocumentEntry[] | undefined,
): boolean {
  const other = new Map((b ?? []).map((d) => [d.path, d.hash]));
  return a.length === other.size && a.every((d) => other.get(d.path) === d.hash);
}
