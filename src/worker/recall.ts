import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallHit,
  type RecallIndex,
  type RecallKnowledge,
  recall,
  recallDocFromEngram,
  recallDocFromKnowledge,
  type SerializedRecallIndex,
  serializeRecallIndex,
  supersededBy,
} from "../core/recall/recall.js";
import { readKnowledge } from "../repo/knowledge.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Catalog, Engram } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { sendEnvelope } from "./emit.js";

interface CachedIndex {
  catalog_hash: string;
  index: SerializedRecallIndex;
}

/**
 * The recall index of a catalog, cached built in the state folder by catalog hash: a query
 * loads one file instead of reading and tokenizing every engram, and the cache is rebuilt
 * whenever memory changes (or when it cannot be read).
 */
export async function recallIndexFor(
  ctx: RepoContext,
  catalog: Catalog,
  source: {
    /** Where the index is cached (default: the work tree's cache). */
    cacheName?: string;
    /** The engrams, when not the work tree's (a session reads its parent version's). */
    load?: () => Promise<Map<string, Engram>>;
    /** The sessions' knowledge, when not the work tree's. */
    knowledge?: () => Promise<RecallKnowledge[]>;
  } = {},
): Promise<RecallIndex> {
  const cachePath = join(ctx.paths.root, source.cacheName ?? "recall-index.json");
  if (existsSync(cachePath)) {
    try {
      const cached = JSON.parse(readFileSync(cachePath, "utf8")) as CachedIndex;
      const index =
        cached.catalog_hash === catalog.hash ? deserializeRecallIndex(cached.index) : undefined;
      if (index) return index;
    } catch {
      // a damaged cache is rebuilt below
    }
  }
  const engrams = source.load
    ? await source.load()
    : await loadEngrams(ctx.repoDir, catalog.entries);
  const listed = catalog.entries
    .map((entry) => engrams.get(entry.engram_id))
    .filter((e) => e !== undefined);
  const superseded = supersededBy(listed);
  const docs = listed.map((e) => recallDocFromEngram(e, superseded.get(e.engram_id)));
  const knowledge = source.knowledge
    ? await source.knowledge()
    : await readKnowledge(ctx.repoDir, catalog);
  for (const k of knowledge) docs.push(recallDocFromKnowledge(k));
  const index = buildRecallIndex(docs);
  mkdirSync(ctx.paths.root, { recursive: true });
  const cache: CachedIndex = { catalog_hash: catalog.hash, index: serializeRecallIndex(index) };
  writeFileAtomicSync(cachePath, JSON.stringify(cache));
  return index;
}

export interface RecallResult {
  query: string;
  catalog_hash: string;
  hits: RecallHit[];
  /** The recall was spooled as a promotion signal (false with --no-signal or no hits). */
  signal: boolean;
}

export async function recallMemory(
  ctx: RepoContext,
  query: string,
  options: RecallMemoryOptions,
): Promise<RecallResult> {
  const catalog = await readCatalog(ctx.repoDir);
  const index = await recallIndexFor(ctx, catalog);
  return recallIn(ctx, { catalog, index }, query, options);
}

export interface RecallMemoryOptions {
  limit?: number | undefined;
  scope?: "st" | "lt" | undefined;
  signal: boolean;
  worker?: string | undefined;
  /** Also the ST engrams an LT engram superseded (hidden by default: one lesson, once). */
  includeSuperseded?: boolean | undefined;
}

/** A recall over an index already loaded (a long-lived server keeps it between queries). */
export async function recallIn(
  ctx: RepoContext,
  loaded: { catalog: Catalog; index: RecallIndex },
  query: string,
  options: RecallMemoryOptions,
): Promise<RecallResult> {
  const { catalog, index } = loaded;
  const hits = recall(index, query, {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
    includeSuperseded: options.includeSuperseded === true,
  });
  let signal = false;
  if (options.signal && hits.length > 0) {
    // Recalls count towards an engram's promotion; a session's knowledge is not promoted.
    const engramHits = hits.filter((h) => h.engram_id.startsWith("e_")).map((h) => h.engram_id);
    if (engramHits.length > 0) {
      await recordRecall(ctx, query, engramHits, options.worker);
      signal = true;
    }
  }
  return { query, catalog_hash: catalog.hash, hits, signal };
}

/** Spools a recall as a promotion signal: always locally, recall must not wait on a network. */
export async function recordRecall(
  ctx: RepoContext,
  query: string,
  hits: string[],
  worker: string | undefined,
): Promise<void> {
  await sendEnvelope(
    ctx,
    "memory_event.v1",
    { kind: "recall", query: query.slice(0, 1000), hits },
    { worker },
    { kind: "spool" },
  );
}
