import type { Dirent } from "node:fs";
import { existsSync, mkdirSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { emptyCatalog, engramHashOf } from "../core/model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, SCOPES, tierDir } from "../core/model/paths.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { StateError } from "../errors.js";
import { checkedCatalog, protoKeyPath } from "../schema/catalog-check.js";
import type { Catalog, CatalogEntry, Engram } from "../schema/engram.js";
import { forEachLimited, fsyncDir, writeFileAtomic } from "../state/atomic.js";

/** The catalog on disk, validated; an absent catalog is the empty one (version 0). */
export async function readCatalog(repoDir: string): Promise<Catalog> {
  const path = join(repoDir, CATALOG_PATH);
  if (!existsSync(path)) return emptyCatalog();
  return parseCatalog(await readFile(path, "utf8"));
}

/** The text of `memory/catalog.json`, validated; a `StateError` names what is wrong. */
export async function parseCatalog(text: string): Promise<Catalog> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StateError(
      `${CATALOG_PATH}: not valid JSON (${(error as Error).message}); run director verify`,
    );
  }
  const checked = checkedCatalog(json);
  if (checked !== undefined) return checked;
  const proto = protoKeyPath(json);
  if (proto !== undefined) {
    throw new StateError(`${CATALOG_PATH}: ${proto}: not a catalog field; run director verify`);
  }
  // Something is wrong: the zod schema names the field (and is loaded only now).
  const { Catalog } = await import("../schema/engram.js");
  const parsed = Catalog.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StateError(
      `${CATALOG_PATH}: ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}; run director verify`,
    );
  }
  return parsed.data;
}

/**
 * Reads one engram and checks it against the hash its catalog entry names, so a damaged or
 * hand-edited file never feeds promotion or the focus view.
 */
export async function readEngram(
  repoDir: string,
  path: string,
  expectedHash?: string,
): Promise<Engram> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(join(repoDir, path), "utf8"));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "not valid JSON";
    throw new StateError(`${path}: ${why}; run director verify${setAsideHint(path)}`, {
      cause: error,
    });
  }
  const { Engram } = await import("../schema/engram.js");
  const parsed = Engram.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StateError(
      `${path}: ${issue?.path.join(".") ?? ""}: ${issue?.message}; run director verify${setAsideHint(path)}`,
    );
  }
  if (expectedHash !== undefined && hashOrWhy(parsed.data) !== expectedHash) {
    throw new StateError(
      `${path}: content does not match its catalog hash; run director verify${setAsideHint(path)}`,
    );
  }
  return parsed.data;
}

/** What to do about one damaged engram file (docs/cli.md, director set-aside). */
function setAsideHint(path: string): string {
  return `, then director set-aside ${path} to take it out of memory as a new version`;
}

/** The engram's content hash, or why there is none (nested too deep to hash). */
function hashOrWhy(engram: Engram): string {
  try {
    return engramHashOf(engram);
  } catch (error) {
    return `no hash: ${(error as Error).message}`;
  }
}

/** Loads the engrams of the given entries, a few files at a time. */
export async function loadEngrams(
  repoDir: string,
  entries: readonly CatalogEntry[],
): Promise<Map<string, Engram>> {
  const out = new Map<string, Engram>();
  await forEachLimited(entries, 32, async (entry) => {
    out.set(entry.engram_id, await readEngram(repoDir, entry.path, entry.hash));
  });
  return out;
}

/** Every file under memory/st and memory/lt, as repository-relative POSIX paths, sorted. */
export async function listTierFiles(repoDir: string): Promise<string[]> {
  const out: string[] = [];
  for (const scope of SCOPES) await collectFiles(repoDir, tierDir(scope), out);
  return out.sort();
}

/**
 * Every file under `rel` (dot files too, symbolic links followed), as repo-relative paths: a
 * plain walk, which starts far faster than a glob library for the one pattern needed.
 */
async function collectFiles(root: string, rel: string, out: string[]): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(root, rel), { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw error;
  }
  for (const entry of entries) {
    const path = `${rel}/${entry.name}`;
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      const target = await stat(join(root, path)).catch(() => undefined);
      isDir = target?.isDirectory() ?? false;
      isFile = target?.isFile() ?? false;
    }
    if (isDir) await collectFiles(root, path, out);
    else if (isFile) out.push(path);
  }
}

export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Writes files atomically (each one whole or not at all) and removes evicted ones. Engrams
 * go first and the catalog and MEMORY.md last, so a reader never sees a catalog that names
 * a file not yet written. Idempotent: applying the same plan twice gives the same tree.
 */
export async function applyFileChanges(
  repoDir: string,
  writes: readonly { path: string; text: string }[],
  deletes: readonly string[],
): Promise<void> {
  // The version log goes with the catalog: written last, after every file it describes.
  const last = new Set([CATALOG_PATH, VERSION_LOG_PATH, FOCUS_PATH]);
  const first = writes.filter((w) => !last.has(w.path));
  const dirs = new Set<string>();
  for (const w of first) {
    const dir = dirname(join(repoDir, w.path));
    if (!dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      dirs.add(dir);
    }
  }
  await forEachLimited(first, 16, (w) => writeFileAtomic(join(repoDir, w.path), w.text));
  await forEachLimited([...dirs], 16, (dir) => fsyncDir(dir));
  for (const path of deletes) {
    const full = join(repoDir, path);
    try {
      unlinkSync(full);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const dir = dirname(full);
    if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
  }
  for (const w of writes.filter((w) => last.has(w.path))) {
    mkdirSync(dirname(join(repoDir, w.path)), { recursive: true });
    await writeFileAtomic(join(repoDir, w.path), w.text);
    await fsyncDir(dirname(join(repoDir, w.path)));
  }
}
