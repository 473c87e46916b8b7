import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { sealCatalog, serializeCatalog } from "../core/model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { focusCandidates, renderFocusFor } from "../core/rendering/focus.js";
import type { VersionRecord } from "../core/versions/log.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { StateError, UsageError } from "../errors.js";
import { documentPaths } from "../repo/memory-files.js";
import { readCatalog, readEngram } from "../repo/memory-tree.js";
import type { Snapshot } from "../repo/version-snapshots.js";
import type { Catalog, Engram } from "../schema/engram.js";
import { fsyncDir, writeFileAtomic } from "../state/atomic.js";
import { withDirectorState } from "./director-state.js";
import { commitVersion } from "./versions.js";

export interface SetAsideResult {
  /** The memory file set aside, repo-relative. */
  path: string;
  /** The engram id when the file is a listed engram; null for a document or a stray file. */
  engram_id: string | null;
  /** What the catalog listed it as: an engram entry, a document entry, or nothing. */
  listed: "engram" | "document" | null;
  /** Where its bytes were kept, relative to the state folder; null when the file was missing. */
  kept_at: string | null;
  version: VersionRecord;
  snapshot: Snapshot | null;
  catalog_version: number;
  catalog_hash: string;
}

/** The folder of the state folder where set-aside files are kept, one folder per version. */
export const SET_ASIDE_DIR = "set-aside";

const ENGRAM_ID = /^e_[0-9a-f]{32}$/;
/** Files a Director never sets aside: the catalog, the version log and MEMORY.md. */
const NOT_SET_ASIDE = new Set([CATALOG_PATH, VERSION_LOG_PATH, FOCUS_PATH]);

/**
 * `director set-aside PATH|ENGRAM_ID`: takes one damaged or invalid memory file out of memory
 * as a new version (made_by `set-aside`): its catalog entry goes, the file leaves the work
 * tree, MEMORY.md is rendered again, and nothing else changes. Its bytes are kept in the state
 * folder (`set-aside/<version>/<path>`) and stay in git history and in the previous version's
 * snapshot, so `director rollback` or git brings it back. A file the catalog does not list
 * (a stray) is set aside alike.
 */
export async function setAside(ctx: RepoContext, target: string): Promise<SetAsideResult> {
  return withDirectorState(ctx, async (buffer) => {
    const catalog = await readCatalogOrExplain(ctx);
    const found = resolveTarget(ctx, catalog, target);
    refuseLinks(ctx.repoDir, found.path);
    const entries = catalog.entries.filter((e) => e.path !== found.path);
    const documents = catalog.documents?.filter((d) => d.path !== found.path);
    const now = receiptTime();
    const next = sealCatalog(
      catalog.catalog_version + 1,
      now > catalog.created_at ? now : catalog.created_at,
      entries,
      documents,
    );
    const keptAt = await keepBytes(ctx, found.path, next.catalog_version);
    const focus = renderFocusFor(
      next,
      await readableEngrams(ctx, next),
      ctx.config.memory,
      undefined,
      await focusDocuments(ctx, next),
    );
    const { record, snapshot } = await commitVersion(ctx, buffer, {
      catalog: next,
      madeBy: { kind: "set-aside", path: found.path },
      writes: [
        { path: CATALOG_PATH, text: serializeCatalog(next) },
        { path: FOCUS_PATH, text: focus.text },
      ],
      deletes: existsSync(join(ctx.repoDir, found.path)) ? [found.path] : [],
      // The state and core documents the version holds: those of the tree but this one.
      documents: documentPaths(ctx.repoDir).filter((p) => p !== found.path),
    });
    return {
      path: found.path,
      engram_id: found.engramId,
      listed: found.listed,
      kept_at: keptAt,
      version: record,
      snapshot,
      catalog_version: next.catalog_version,
      catalog_hash: next.hash,
    };
  });
}

async function readCatalogOrExplain(ctx: RepoContext): Promise<Catalog> {
  try {
    return await readCatalog(ctx.repoDir);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    throw new StateError(
      `${error.message.replace(/; run director verify$/, "")}; the catalog itself cannot be set aside: bring it back from git (git checkout -- ${CATALOG_PATH}) or make a version like an earlier one (director rollback N)`,
      { cause: error },
    );
  }
}

interface Found {
  path: string;
  engramId: string | null;
  listed: SetAsideResult["listed"];
}

/** The memory file `target` names: an engram id, or a path under memory/ (listed or stray). */
function resolveTarget(ctx: RepoContext, catalog: Catalog, target: string): Found {
  if (ENGRAM_ID.test(target)) {
    const entry = catalog.entries.find((e) => e.engram_id === target);
    if (entry === undefined) {
      throw new UsageError(
        `${target}: no engram with this id in ${CATALOG_PATH}; give the file's path to set aside a file the catalog does not list`,
      );
    }
    return { path: entry.path, engramId: entry.engram_id, listed: "engram" };
  }
  const path = target.replace(/\\/g, "/").replace(/^\.\//, "");
  if (
    !path.startsWith(`${MEMORY_DIR}/`) ||
    path.split("/").some((part) => part === ".." || part === "." || part === "") ||
    NOT_SET_ASIDE.has(path)
  ) {
    throw new UsageError(
      `${target}: expected an engram id or the repository-relative path of an engram or document under ${MEMORY_DIR}/ (not the catalog, the version log or MEMORY.md)`,
    );
  }
  const entry = catalog.entries.find((e) => e.path === path);
  if (entry !== undefined) return { path, engramId: entry.engram_id, listed: "engram" };
  if (catalog.documents?.some((d) => d.path === path)) {
    return { path, engramId: null, listed: "document" };
  }
  if (existsSync(join(ctx.repoDir, path))) {
    if (!statSync(join(ctx.repoDir, path)).isFile()) {
      throw new UsageError(`${path}: a folder; give the path of one file under it`);
    }
    return { path, engramId: null, listed: null };
  }
  throw new UsageError(`${path}: no such memory file, and the catalog does not list it`);
}

/**
 * Throws, before anything is read, unless every part of `path` is a plain folder and the file
 * a regular file (or absent): a committed link such as `memory/st/x.json -> /proc/self/environ`
 * would otherwise have its target copied into the state folder.
 */
function refuseLinks(repoDir: string, path: string): void {
  const parts = path.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const at = parts.slice(0, i).join("/");
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(join(repoDir, at));
    } catch {
      return; // absent: nothing to read, the entry alone is removed
    }
    const last = i === parts.length;
    if (stat.isSymbolicLink()) {
      throw new UsageError(
        `${at}: a symbolic link (to ${readlinkSync(join(repoDir, at))}); engram never reads through a link: nothing was set aside. Remove the link (git rm ${at}) and commit`,
      );
    }
    if (last ? !stat.isFile() : !stat.isDirectory()) {
      throw new UsageError(
        `${at}: not a regular ${last ? "file" : "folder"}; nothing was set aside. Remove it (git rm ${at}) and commit`,
      );
    }
  }
}

/** Copies the file's bytes into the state folder (durably) before the version removes it. */
async function keepBytes(ctx: RepoContext, path: string, version: number): Promise<string | null> {
  const from = join(ctx.repoDir, path);
  if (!existsSync(from)) return null;
  const rel = `${SET_ASIDE_DIR}/v${version}/${path}`;
  const to = join(ctx.paths.root, rel);
  mkdirSync(dirname(to), { recursive: true });
  await writeFileAtomic(to, readFileSync(from));
  await fsyncDir(dirname(to));
  return rel;
}

/**
 * The engrams MEMORY.md may show, those that read back: another damaged file is left out of
 * the view (and named by `director verify`), never a reason to refuse setting this one aside.
 */
async function readableEngrams(ctx: RepoContext, catalog: Catalog): Promise<Map<string, Engram>> {
  const out = new Map<string, Engram>();
  for (const entry of focusCandidates(catalog, ctx.config.memory.memory_md_max_items * 4)) {
    try {
      out.set(entry.engram_id, await readEngram(ctx.repoDir, entry.path, entry.hash));
    } catch (error) {
      if (!(error instanceof StateError)) throw error;
    }
  }
  return out;
}

async function focusDocuments(ctx: RepoContext, catalog: Catalog) {
  const { loadFocusDocuments } = await import("./consolidate.js");
  try {
    return await loadFocusDocuments(ctx.repoDir, catalog);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    return undefined;
  }
}
