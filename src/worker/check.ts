import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { catalogHashOf, emptyCatalog, engramHashOf } from "../core/model/engram.js";
import { CATALOG_PATH, catalogPathProblem, engramPath, MEMORY_DIR } from "../core/model/paths.js";
import type { SyncAction, SyncReason } from "../core/swarm/drift.js";
import { PathConfiner } from "../repo/confine.js";
import { type DriftReport, readDrift } from "../repo/drift.js";
import {
  listMemoryLinks,
  listTierFiles,
  parseCatalogShape,
  readTextIfExists,
} from "../repo/memory-tree.js";
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
  /**
   * Paths refused, each with why: a catalog path out of its place (`../`, absolute, not the
   * one its entry gives) or a symbolic link under memory/ or at MEMORY.md. Never followed.
   */
  unsafe: string[];
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
  const links = await listMemoryLinks(ctx.repoDir);
  const unsafe = links.map((p) => `${p}: a symbolic link (never followed)`);
  const confiner = new PathConfiner(ctx.repoDir);
  const catalogText =
    links.includes(MEMORY_DIR) || links.includes(CATALOG_PATH)
      ? undefined
      : await readTextIfExists(confiner.resolve(CATALOG_PATH, "memory", CATALOG_PATH));
  const catalog = catalogText === undefined ? emptyCatalog() : await parseCatalogShape(catalogText);
  const bad = catalogPathProblem(catalog);
  if (bad !== undefined) {
    unsafe.push(`${CATALOG_PATH}: ${bad.field} ${JSON.stringify(bad.path)} ${bad.problem}`);
  }
  const catalogModified =
    catalogText !== undefined &&
    catalogHashOf(JSON.parse(catalogText) as Record<string, unknown>) !== catalog.hash;
  const missing: string[] = [];
  const modified: string[] = [];
  // Only entries at their own path are read, through real folders only.
  const readable = catalog.entries.filter(
    (e) => e.path === engramPath(e.scope, e.version, e.engram_id),
  );
  await forEachLimited(readable, 32, async (entry) => {
    let text: string;
    try {
      confiner.refuseLinks(entry.path, entry.path);
    } catch {
      return; // listed in `unsafe` already
    }
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
  unsafe.sort();
  const filesOk =
    !catalogModified &&
    missing.length === 0 &&
    modified.length === 0 &&
    unlisted.length === 0 &&
    unsafe.length === 0;
  return {
    ok: filesOk && !drift?.sync_required,
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    catalog_modified: catalogModified,
    missing,
    modified,
    unlisted,
    unsafe,
    sync_required: drift?.sync_required ?? false,
    reason: drift?.reason ?? null,
    required_action: drift?.required_action ?? null,
    drift,
    fetched,
  };
}
