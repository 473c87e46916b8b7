import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { catalogHashOf, engramHashOf } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import type { SyncAction, SyncReason } from "../core/swarm/drift.js";
import { type DriftReport, readDrift } from "../repo/drift.js";
import { listTierFiles, readCatalog, readTextIfExists } from "../repo/memory-tree.js";
import { forEachLimited } from "../state/atomic.js";

export interface CheckResult {
  /** Memory matches its catalog and no sync with main is required. */
  ok: boolean;
  catalog_version: number;
  catalog_hash: string;
  /** The catalog's own hash does not match its content. */
  catalog_modified: boolean;
  missing: string[];
  modified: string[];
  unlisted: string[];
  /** From `[policy.sync_main]` against main (local refs); false when there is no main. */
  sync_required: boolean;
  reason: SyncReason | null;
  required_action: SyncAction | null;
  /** The whole drift report, null when the repository has no main to compare with. */
  drift: DriftReport | null;
  /** Whether `origin` was fetched first (false: offline, no such remote, or unreachable). */
  fetched: boolean;
}

/**
 * Whether the local memory files match their catalog (nothing missing, edited or extra) and
 * whether the worker must sync with main.
 */
export async function checkMemory(
  ctx: RepoContext,
  options: { main?: string; offline?: boolean } = {},
): Promise<CheckResult> {
  // The remote's main when it is reachable, else the refs already here.
  // simple-git is loaded only to fetch: `--offline` starts without it.
  const fetched = options.offline
    ? false
    : await (await import("../git/remote.js")).fetchOrigin(ctx.repoDir);
  const catalogText = await readTextIfExists(join(ctx.repoDir, CATALOG_PATH));
  const catalog = await readCatalog(ctx.repoDir);
  const catalogModified =
    catalogText !== undefined &&
    catalogHashOf(JSON.parse(catalogText) as Record<string, unknown>) !== catalog.hash;
  const missing: string[] = [];
  const modified: string[] = [];
  await forEachLimited(catalog.entries, 32, async (entry) => {
    let text: string;
    try {
      text = await readFile(join(ctx.repoDir, entry.path), "utf8");
    } catch {
      missing.push(entry.path);
      return;
    }
    try {
      if (engramHashOf(JSON.parse(text) as Record<string, unknown>) !== entry.hash)
        modified.push(entry.path);
    } catch {
      modified.push(entry.path);
    }
  });
  const listed = new Set(catalog.entries.map((e) => e.path));
  const unlisted = (await listTierFiles(ctx.repoDir)).filter(
    (p) => !listed.has(p) && !p.endsWith("/.gitkeep"),
  );
  missing.sort();
  modified.sort();
  const drift = (await readDrift(ctx.repoDir, ctx.config.policy.sync_main, options.main)) ?? null;
  const filesOk =
    !catalogModified && missing.length === 0 && modified.length === 0 && unlisted.length === 0;
  return {
    ok: filesOk && !drift?.sync_required,
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    catalog_modified: catalogModified,
    missing,
    modified,
    unlisted,
    sync_required: drift?.sync_required ?? false,
    reason: drift?.reason ?? null,
    required_action: drift?.required_action ?? null,
    drift,
    fetched,
  };
}
