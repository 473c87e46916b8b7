import type { RepoContext } from "../context/repo-context.js";
import type { Catalog } from "../schema/engram.js";

/**
 * What a read searched: the repository, the memory version, the tiers, how much was in
 * scope, and whether a remote store was asked. Every read (recall, context, freshness, the
 * MCP tools) states it, so an empty answer cannot be mistaken for "nothing is known" when the
 * question went to the wrong place. Recall counts engrams, the graph reads count learnings.
 */
export interface MemoryScope {
  repository: string;
  memory_version: number;
  catalog_hash: string;
  tiers: ("st" | "lt")[];
  engrams_in_scope?: number;
  learnings_in_scope?: number;
  /** Where a learning's graph activity was read from (freshness only). */
  activity_sources?: ActivitySources;
  remote_store: { asked: boolean; reason: string };
}

/** Git is always read; GitHub when it is configured, with why not when it is not. */
export interface ActivitySources {
  git: true;
  github: { asked: boolean; reason: string };
}

/** The version of memory a read saw: the catalog's, or what an index derived from it stored. */
export interface MemoryVersion {
  memory_version: number;
  catalog_hash: string;
}

export function versionOf(catalog: Catalog): MemoryVersion {
  return { memory_version: catalog.catalog_version, catalog_hash: catalog.hash };
}

/** The scope of a recall: the engrams of `tiers`. */
export function recallScope(
  ctx: RepoContext,
  catalog: Catalog,
  tiers: ("st" | "lt")[],
): MemoryScope {
  return {
    repository: ctx.repoDir,
    ...versionOf(catalog),
    tiers,
    engrams_in_scope: catalog.entries.filter((e) => tiers.includes(e.scope)).length,
    // Local memory only; a read that also asked the sync stores (memory_recall) says so here.
    remote_store: { asked: false, reason: "no external store is configured for recall" },
  };
}

/** The scope of a graph read (context, freshness): the learnings of both tiers. */
export function learningScope(
  ctx: RepoContext,
  version: MemoryVersion,
  learnings: number,
  activity?: ActivitySources,
): MemoryScope {
  return {
    repository: ctx.repoDir,
    memory_version: version.memory_version,
    catalog_hash: version.catalog_hash,
    tiers: ["lt", "st"],
    learnings_in_scope: learnings,
    ...(activity ? { activity_sources: activity } : {}),
    remote_store: { asked: false, reason: "no external store is configured for context" },
  };
}
