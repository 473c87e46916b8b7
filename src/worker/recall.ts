import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildRecallIndex,
  type RecallDoc,
  type RecallHit,
  recall,
  recallDocFromEngram,
} from "../core/recall.js";
import type { RepoContext } from "../director/context.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { spoolEnvelope } from "./emit.js";

interface CachedDocs {
  catalog_hash: string;
  docs: RecallDoc[];
}

/**
 * The recall documents for a catalog, cached in the state folder by catalog hash: a query
 * reads one file instead of every engram, and the cache is rebuilt whenever memory changes.
 */
export async function recallDocs(ctx: RepoContext, catalog: Catalog): Promise<RecallDoc[]> {
  const cachePath = join(ctx.paths.root, "recall-index.json");
  if (existsSync(cachePath)) {
    try {
      const cached = JSON.parse(readFileSync(cachePath, "utf8")) as CachedDocs;
      if (cached.catalog_hash === catalog.hash) return cached.docs;
    } catch {
      // a damaged cache is rebuilt below
    }
  }
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  const docs = catalog.entries
    .map((entry) => engrams.get(entry.engram_id))
    .filter((e) => e !== undefined)
    .map(recallDocFromEngram);
  mkdirSync(ctx.paths.root, { recursive: true });
  writeFileAtomicSync(
    cachePath,
    JSON.stringify({ catalog_hash: catalog.hash, docs } satisfies CachedDocs),
  );
  return docs;
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
  options: {
    limit?: number | undefined;
    scope?: "st" | "lt" | undefined;
    signal: boolean;
    worker?: string | undefined;
  },
): Promise<RecallResult> {
  const catalog = await readCatalog(ctx.repoDir);
  const index = buildRecallIndex(await recallDocs(ctx, catalog));
  const hits = recall(index, query, {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  });
  let signal = false;
  if (options.signal && hits.length > 0) {
    spoolEnvelope(
      ctx,
      "memory_event.v1",
      { kind: "recall", query: query.slice(0, 1000), hits: hits.map((h) => h.engram_id) },
      { worker: options.worker },
    );
    signal = true;
  }
  return { query, catalog_hash: catalog.hash, hits, signal };
}
