import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { sha256Hex } from "../core/model/canonical.js";
import { parseFocusMarker } from "../core/rendering/focus-header.js";
import type { CatalogRead } from "../repo/catalog-summary.js";
import { loadEngrams } from "../repo/memory-tree.js";
import type { MemoryConfig } from "../schema/config.js";
import { readCacheFile, writeCacheFile } from "../state/cache-file.js";

/**
 * Whether MEMORY.md is what the Director generates, for a cycle with nothing else to do: a
 * hand-edited view is rewritten by the next run, idle or not. The answer for the exact bytes
 * of MEMORY.md and the exact inputs of its rendering is cached in the state folder, so a
 * no-op run hashes 16 KB instead of loading engrams; any change to either misses.
 */
export interface FocusJudgement {
  fresh: boolean;
  /** Where the view differs from what the Director generates (`line N is …, expected …`). */
  rewrite?: string;
}

const FORMAT = "engram-focus-check";

/** The "Now" lines the view was last rendered with (none with the on_merge cadence). */
export function lastNow(
  memory: MemoryConfig,
  focusNow: readonly string[] | undefined,
): readonly string[] | undefined {
  return memory.memory_md_update_cadence === "on_merge" ? undefined : (focusNow ?? []);
}

function cachePath(ctx: RepoContext): string {
  return join(ctx.paths.root, "focus-check.json");
}

/** Everything but the engrams (pinned by the catalog's hash) that the view depends on. */
function inputKey(catalogHash: string, memory: MemoryConfig, now: readonly string[] | undefined) {
  return sha256Hex(
    JSON.stringify([
      catalogHash,
      memory.memory_md_max_bytes,
      memory.memory_md_max_items,
      memory.memory_md_update_cadence,
      now ?? null,
    ]),
  );
}

/** Remembers that `text` is the view the Director generates for these inputs. */
export function rememberFocus(
  ctx: RepoContext,
  catalogHash: string,
  now: readonly string[] | undefined,
  text: string,
): void {
  const key = inputKey(catalogHash, ctx.config.memory, now);
  writeCacheFile(
    cachePath(ctx),
    `${JSON.stringify({ format: FORMAT, key, focus_sha256: sha256Hex(text) })}\n`,
  );
}

export async function judgeFocus(
  ctx: RepoContext,
  read: CatalogRead,
  text: string | undefined,
  now: readonly string[] | undefined,
): Promise<FocusJudgement> {
  // Missing or made from another catalog: rewritten, as it always was.
  if (text === undefined || parseFocusMarker(text)?.catalog_hash !== read.summary.hash) {
    return { fresh: false };
  }
  const memory = ctx.config.memory;
  const key = inputKey(read.summary.hash, memory, now);
  const cached = parseCache(await readCacheFile(cachePath(ctx)));
  if (cached?.key === key && cached.focus_sha256 === sha256Hex(text)) return { fresh: true };

  // A miss: the view is rendered as a cycle would, with what that loads.
  const [{ focusDifference, generatedFocus }, { focusCandidates }, { loadFocusDocuments }] =
    await Promise.all([
      import("../core/checks/verify-focus.js"),
      import("../core/rendering/focus.js"),
      import("./consolidate.js"),
    ]);
  const catalog = await read.catalog();
  const candidates = focusCandidates(catalog, memory.memory_md_max_items * 4);
  const expected = generatedFocus(
    {
      catalog,
      engrams: await loadEngrams(ctx.repoDir, candidates),
      documents: await loadFocusDocuments(ctx.repoDir, catalog),
      memory,
    },
    now,
  );
  const difference = focusDifference(text, expected);
  if (difference === undefined) {
    rememberFocus(ctx, catalog.hash, now, text);
    return { fresh: true };
  }
  return { fresh: false, rewrite: difference };
}

function parseCache(text: string): { key: unknown; focus_sha256: unknown } | undefined {
  try {
    const json = JSON.parse(text) as unknown;
    if (typeof json !== "object" || json === null) return undefined;
    const { format, key, focus_sha256 } = json as Record<string, unknown>;
    return format === FORMAT ? { key, focus_sha256 } : undefined;
  } catch {
    return undefined;
  }
}
