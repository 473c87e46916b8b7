import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import {
  claimsKey,
  type LearningClaim,
  parseClaims,
  serializeClaims,
} from "../core/graph/claims-cache.js";
import { learningsOf } from "../core/graph/learnings.js";
import { loadEngrams } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import { readCacheFile, writeCacheFile } from "../state/cache-file.js";

/**
 * The learnings of every engram of the catalog, as the claims a session's duplicate merges
 * into, cached in the state folder by the catalog's engram entries (`claimsKey`): a cycle
 * whose engrams are unchanged reads one file instead of every engram. A missing, stale or
 * damaged cache is derived again from the engrams and rewritten, with the same result.
 */
export async function engramClaims(ctx: RepoContext, catalog: Catalog): Promise<LearningClaim[]> {
  const key = claimsKey(catalog.entries);
  // Beside the graph's other caches (docs/graph.md).
  const path = join(ctx.paths.root, "graph", "claims.json");
  const cached = parseClaims(await readCacheFile(path), key);
  if (cached !== undefined) return cached;
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  const claims = learningsOf([...engrams.values()]).map(
    ({ id, type, text, rationale, evidence }) => ({
      id,
      type,
      text,
      rationale,
      evidence,
    }),
  );
  writeCacheFile(path, serializeClaims(key, claims));
  return claims;
}
