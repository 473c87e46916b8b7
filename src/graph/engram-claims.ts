import { constants, lstatSync, mkdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
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
import { writeFileAtomicSync } from "../state/atomic.js";

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
  const cached = parseClaims(await readCache(path), key);
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
  writeCache(path, serializeClaims(key, claims));
  return claims;
}

/**
 * Only a speed-up: a cache that cannot be written costs the next cycle a read of the engrams,
 * never this one its result. A folder in its place is left alone (no rename replaces it).
 */
function writeCache(path: string, text: string): void {
  try {
    if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) return;
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomicSync(path, text);
  } catch {}
}

/**
 * The cache's text; empty (no cache) when it cannot be read, whatever the reason. Opened
 * without blocking and read only when it is a plain file: a FIFO put there never hangs a cycle.
 */
async function readCache(path: string): Promise<string> {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      return (await handle.stat()).isFile() ? await handle.readFile("utf8") : "";
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
}
