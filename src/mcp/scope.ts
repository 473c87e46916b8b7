import type { RepoContext } from "../context/repo-context.js";
import type { Catalog } from "../schema/engram.js";

/**
 * What a read searched: the repository, the memory version, the tiers, and whether a remote
 * store was asked. An answer that states its scope cannot be mistaken for "nothing is known"
 * when the question went to the wrong place.
 */
export interface MemoryScope {
  repository: string;
  memory_version: number;
  catalog_hash: string;
  tiers: ("st" | "lt")[];
  engrams_in_scope: number;
  remote_store: { asked: boolean; reason: string };
}

export function scopeOf(ctx: RepoContext, catalog: Catalog, tiers: ("st" | "lt")[]): MemoryScope {
  return {
    repository: ctx.repoDir,
    memory_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    tiers,
    engrams_in_scope: catalog.entries.filter((e) => tiers.includes(e.scope)).length,
    // Hybrid reads through an external store come with the sync engine; until then the
    // answer says plainly that only local memory was searched.
    remote_store: { asked: false, reason: "no external store is configured for recall" },
  };
}
