import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { tierUsage } from "../core/compaction/budget.js";
import {
  catalogEntryFor,
  engramHashOf,
  engramPath,
  sealCatalog,
  serializeCatalog,
  serializeEngram,
} from "../core/model/engram.js";
import { CATALOG_PATH, engramFileName, FOCUS_PATH } from "../core/model/paths.js";
import { focusCandidates, renderFocusFor } from "../core/rendering/focus.js";
import { StateError, UsageError } from "../errors.js";
import { openRepo, resolveCommit } from "../git/history.js";
import { assertCatalogSealed } from "../repo/catalog-seal.js";
import { findMemoryFileInHistory } from "../repo/history-search.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import { type Catalog, Engram } from "../schema/engram.js";
import { withDirectorState } from "./director-state.js";
import { commitVersion } from "./versions.js";

/** A tier over its budget after a restore: the next `director run` evicts from it again. */
export interface OverBudget {
  scope: "st" | "lt";
  files: number;
  max_files: number;
  bytes: number;
  max_bytes: number;
}

export interface RestoreResult {
  engram_id: string;
  restored: boolean;
  path: string;
  /** The commit the engram was read from; null when it was already in the catalog. */
  commit: string | null;
  catalog_version: number;
  catalog_hash: string;
  over_budget: OverBudget[];
}

const ENGRAM_ID = /^e_[0-9a-f]{32}$/;

/**
 * `director restore ID`: finds the engram in the history of HEAD (newest first), checks it
 * is intact (schema, content hash, id, path, canonical bytes), writes it back byte for byte
 * and lists it in a new catalog version, with MEMORY.md regenerated. The history is read
 * before the Director lock is taken, so a long search does not hold up a Director cycle.
 */
export async function restoreEngram(ctx: RepoContext, engramId: string): Promise<RestoreResult> {
  if (!ENGRAM_ID.test(engramId)) {
    throw new UsageError(`${engramId}: expected an engram id, e_ followed by 32 hex digits`);
  }
  const present = alreadyListed(ctx, engramId, await readCatalog(ctx.repoDir));
  if (present) return present;

  const repo = await openRepo(ctx.repoDir);
  const head = await resolveCommit(repo, "HEAD");
  const damaged: string[] = [];
  let found: Engram | undefined;
  const hit = await findMemoryFileInHistory(repo, head, engramFileName(engramId), (text, path) => {
    found = intactEngram(text, path, engramId);
    if (!found) damaged.push(path);
    return found !== undefined;
  });
  if (!hit || !found) {
    const also = damaged.length > 0 ? `; only damaged copies were found (${damaged[0]})` : "";
    throw new StateError(
      `${engramId}: no engram with this id in the history of HEAD (${head.slice(0, 12)})${also}`,
    );
  }
  const engram = found;

  return withDirectorState(ctx, async (buffer) => {
    // Read again under the lock: a Director cycle may have changed it meanwhile.
    const catalog = assertCatalogSealed(await readCatalog(ctx.repoDir));
    const raced = alreadyListed(ctx, engramId, catalog);
    if (raced) return raced;
    const entry = catalogEntryFor(engram, Buffer.byteLength(hit.text, "utf8"));
    const now = receiptTime();
    const next = sealCatalog(
      catalog.catalog_version + 1,
      now > catalog.created_at ? now : catalog.created_at,
      [...catalog.entries, entry],
      catalog.documents,
    );
    // Only the engrams the focus view may show are read; the restored one is in hand.
    const wanted = focusCandidates(next, ctx.config.memory.memory_md_max_items * 4).filter(
      (e) => e.engram_id !== engramId,
    );
    const engrams = await loadEngrams(ctx.repoDir, wanted);
    engrams.set(engramId, engram);
    const focus = renderFocusFor(next, engrams, ctx.config.memory);
    await commitVersion(ctx, buffer, {
      catalog: next,
      madeBy: { kind: "restore" },
      writes: [
        { path: hit.path, text: hit.text },
        { path: CATALOG_PATH, text: serializeCatalog(next) },
        { path: FOCUS_PATH, text: focus.text },
      ],
      deletes: [],
    });
    return {
      engram_id: engramId,
      restored: true,
      path: hit.path,
      commit: hit.commit,
      catalog_version: next.catalog_version,
      catalog_hash: next.hash,
      over_budget: overBudget(ctx, next.entries),
    };
  });
}

function alreadyListed(
  ctx: RepoContext,
  engramId: string,
  catalog: Catalog,
): RestoreResult | undefined {
  const listed = catalog.entries.find((e) => e.engram_id === engramId);
  if (!listed) return undefined;
  return {
    engram_id: engramId,
    restored: false,
    path: listed.path,
    commit: null,
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    over_budget: overBudget(ctx, catalog.entries),
  };
}

/** The engram in `text` if it is exactly what the Director wrote at `path`; else undefined. */
function intactEngram(text: string, path: string, engramId: string): Engram | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Engram.safeParse(raw).success) return undefined;
  // The raw object, as verify reads it: parsing may reorder the keys of nested objects.
  const engram = raw as Engram;
  const hash = engramHashOf(engram);
  const derivedId = `e_${hash.slice("sha256:".length, "sha256:".length + 32)}`;
  if (hash !== engram.hash || derivedId !== engramId || engram.engram_id !== engramId) {
    return undefined;
  }
  if (path !== engramPath(engram.scope, engram.version, engramId)) return undefined;
  // Byte for byte what verify expects: a re-serialized copy would not be the same file.
  return serializeEngram(engram) === text ? engram : undefined;
}

function overBudget(ctx: RepoContext, entries: Parameters<typeof tierUsage>[0]): OverBudget[] {
  const m = ctx.config.memory;
  const usage = tierUsage(entries);
  const out: OverBudget[] = [];
  for (const scope of ["st", "lt"] as const) {
    const max_files = scope === "st" ? m.st_max_files : m.lt_max_files;
    const max_bytes = scope === "st" ? m.st_max_total_bytes : m.lt_max_total_bytes;
    const { files, bytes } = usage[scope];
    if (files > max_files || bytes > max_bytes)
      out.push({ scope, files, max_files, bytes, max_bytes });
  }
  return out;
}
