import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { checkFocusFile, engramJson } from "../core/checks/verify-focus-sources.js";
import { catalogHashOf, emptyCatalog, engramHashOf } from "../core/model/engram.js";
import {
  CATALOG_PATH,
  catalogPathProblem,
  engramPath,
  FOCUS_PATH,
  MEMORY_DIR,
} from "../core/model/paths.js";
import { focusCandidates } from "../core/rendering/focus.js";
import { parseFocusMarker } from "../core/rendering/focus-header.js";
import type { CheckoutAction, CheckoutReason } from "../core/swarm/drift.js";
import { FOCUS_DOCUMENT_KINDS } from "../core/versions/step.js";
import { readText } from "../fs-async.js";
import { PathConfiner } from "../repo/confine.js";
import { type DriftReport, readDrift } from "../repo/drift.js";
import {
  listMemoryLinks,
  listTierFiles,
  parseCatalogShape,
  readTextIfExists,
} from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import { forEachLimited } from "../state/atomic.js";
import { type UndrainedSpool, undrainedSpool } from "./stranded.js";

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
  /**
   * Why MEMORY.md is not what the Director generates from the catalog (missing, made from
   * another catalog, or a line that differs), null when it is.
   */
  focus_problem: string | null;
  /**
   * From `[policy.sync_main]` against main (local refs): true when `worker sync` has main to
   * bring in; false when there is no main.
   */
  sync_required: boolean;
  /**
   * Why the branch is not in line with main: `behind_main` or `catalog_mismatch` (sync), or
   * `uncommitted_memory` (the work tree's catalog is not HEAD's: commit it; no sync helps).
   */
  reason: CheckoutReason | null;
  required_action: CheckoutAction | null;
  /** The whole drift report, null when the repository has no main to compare with. */
  drift: DriftReport | null;
  /** Whether `origin` was fetched first (false: offline, no such remote, or unreachable). */
  fetched: boolean;
  /**
   * Notes waiting in this checkout's spool where no Director drains them (a clone's own
   * spool): `worker resend` sends them. Null when the spool is empty or a Director drains it.
   * It does not fail the check: the memory here is still sound.
   */
  undrained_spool: UndrainedSpool | null;
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
  const catalogModified = catalogText !== undefined && !sealedAsStated(catalogText, catalog.hash);
  const missing: string[] = [];
  const modified: string[] = [];
  // Only entries at their own path are read, through real folders only.
  const readable = catalog.entries.filter(
    (e) => e.path === engramPath(e.scope, e.version, e.engram_id),
  );
  // The engrams MEMORY.md may show are kept for its check: the same bytes that were hashed.
  const candidates = new Set(
    focusCandidates(catalog, ctx.config.memory.memory_md_max_items * 4).map((e) => e.path),
  );
  const texts = new Map<string, string>();
  await forEachLimited(readable, 32, async (entry) => {
    let text: string;
    try {
      confiner.refuseLinks(entry.path, entry.path);
    } catch {
      return; // listed in `unsafe` already
    }
    try {
      text = await readText(join(ctx.repoDir, entry.path));
    } catch {
      missing.push(entry.path);
      return;
    }
    if (candidates.has(entry.path)) texts.set(entry.path, text);
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
  // MEMORY.md is checked only when nothing on its way is a link (those are `unsafe` already).
  const focus =
    links.includes(FOCUS_PATH) || links.includes(MEMORY_DIR)
      ? null
      : await focusProblem(ctx, confiner, catalog, (path) => texts.get(path));
  const filesOk =
    !catalogModified &&
    missing.length === 0 &&
    modified.length === 0 &&
    unlisted.length === 0 &&
    unsafe.length === 0 &&
    focus === null;
  return {
    ok: filesOk && (drift === null || drift.reason === null),
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    catalog_modified: catalogModified,
    missing,
    modified,
    unlisted,
    unsafe,
    focus_problem: focus,
    sync_required: drift?.sync_required ?? false,
    reason: drift?.reason ?? null,
    required_action: drift?.required_action ?? null,
    drift,
    fetched,
    undrained_spool: undrainedSpool(ctx),
  };
}

/** Whether the catalog's text hashes to the hash it states (a nesting too deep to hash: no). */
function sealedAsStated(text: string, hash: string): boolean {
  try {
    return catalogHashOf(JSON.parse(text) as Record<string, unknown>) === hash;
  } catch {
    return false;
  }
}

/**
 * Why MEMORY.md is not what the Director generates from `catalog`, or null. `text` gives the
 * focus candidates' texts as they were hashed; the documents are read here.
 */
async function focusProblem(
  ctx: RepoContext,
  confiner: PathConfiner,
  catalog: Catalog,
  text: (path: string) => string | undefined,
): Promise<string | null> {
  const memoryMd = await readTextIfExists(confiner.resolve(FOCUS_PATH, "memory", FOCUS_PATH));
  if (memoryMd === undefined) {
    return catalog.entries.length > 0 ? `${FOCUS_PATH} is missing; director run writes it` : null;
  }
  const marker = parseFocusMarker(memoryMd);
  if (marker?.catalog_hash !== catalog.hash) {
    const from = marker ? `catalog ${marker.catalog_hash}` : "no catalog (it has no marker line)";
    return `${FOCUS_PATH} was generated from ${from}, not from ${CATALOG_PATH} ${catalog.hash}; the next director run rewrites it`;
  }
  const documents = new Map<string, string>();
  for (const d of catalog.documents ?? []) {
    // Only a document where its kind goes is read: the catalog may come from anyone.
    if (!FOCUS_DOCUMENT_KINDS.has(d.kind) || !DOCUMENT_PATH.test(d.path)) continue;
    let found: string | undefined;
    try {
      found = await readTextIfExists(confiner.resolve(d.path, "document", CATALOG_PATH));
    } catch {
      continue; // a link or a path out of place: not read, never followed
    }
    if (found !== undefined) documents.set(d.path, found);
  }
  const finding = checkFocusFile(memoryMd, {
    catalog,
    text,
    documents,
    memory: ctx.config.memory,
    readEngram: engramJson,
  });
  return finding ? `${FOCUS_PATH} ${finding.message}` : null;
}

// No segment starts with a dot: neither `..` nor a hidden file.
const DOCUMENT_PATH = /^memory\/(?:state|core|knowledge)(?:\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+$/;
