import type { Dirent } from "node:fs";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { emptyCatalog, engramHashOf } from "../core/model/engram.js";
import {
  CATALOG_PATH,
  catalogPathProblem,
  engramPath,
  FOCUS_PATH,
  MEMORY_DIR,
  SCOPES,
  tierDir,
} from "../core/model/paths.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { StateError, withPath } from "../errors.js";
import { entriesOf, lstatOf, readText } from "../fs-async.js";
import { checkedCatalog, protoKeyPath } from "../schema/catalog-check.js";
import type { Catalog, CatalogEntry, Engram } from "../schema/engram.js";
import { forEachLimited, fsyncDir, writeFileAtomic } from "../state/atomic.js";
import { PathConfiner } from "./confine.js";

/** The catalog on disk, validated; an absent catalog is the empty one (version 0). */
export async function readCatalog(repoDir: string): Promise<Catalog> {
  const path = new PathConfiner(repoDir).resolve(CATALOG_PATH, "memory", CATALOG_PATH);
  if (!existsSync(path)) return emptyCatalog();
  return parseCatalog(await readText(path).catch((e) => Promise.reject(withPath(e, CATALOG_PATH))));
}

/**
 * The catalog on disk, its shape validated but not its paths: for whoever needs only its
 * version and hash (drift), or reports bad paths itself (`worker check`).
 */
export async function readCatalogShape(repoDir: string): Promise<Catalog> {
  const path = new PathConfiner(repoDir).resolve(CATALOG_PATH, "memory", CATALOG_PATH);
  if (!existsSync(path)) return emptyCatalog();
  return parseCatalogShape(
    await readText(path).catch((e) => Promise.reject(withPath(e, CATALOG_PATH))),
  );
}

/** The text of `memory/catalog.json`, validated; a `StateError` names what is wrong. */
export async function parseCatalog(text: string): Promise<Catalog> {
  return confinedCatalog(await parseCatalogShape(text));
}

/** `parseCatalog` without the paths' check: for `worker check`, which reports bad paths. */
export async function parseCatalogShape(text: string): Promise<Catalog> {
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
  return parsed.data as Catalog;
}

/**
 * The catalog, once every path it names is where its kind belongs: a path that leaves its
 * folder (`../`, absolute) is refused here, before eviction, rollback or a read can use it.
 */
export function confinedCatalog(catalog: Catalog, where: string = CATALOG_PATH): Catalog {
  const bad = catalogPathProblem(catalog);
  if (bad === undefined) return catalog;
  throw new StateError(
    `${where}: ${bad.field} ${JSON.stringify(bad.path)} ${bad.problem}: refused, nothing was read or written there; run director verify`,
  );
}

/**
 * Reads one engram and checks it against the hash its catalog entry names, so a damaged or
 * hand-edited file never feeds promotion or the focus view.
 */
export async function readEngram(
  repoDir: string,
  path: string,
  expectedHash?: string,
  confiner: PathConfiner = new PathConfiner(repoDir),
): Promise<Engram> {
  const { Engram } = await import("../schema/engram.js");
  return readEngramWith(Engram, confiner, path, expectedHash);
}

/**
 * `readEngram` with the schema at hand. It reads synchronously: a cycle reads every engram
 * of memory, and a plain read of each small file costs a fraction of what an asynchronous
 * one does (open, stat, read and close each a trip through the thread pool).
 */
function readEngramWith(
  schema: EngramSchema,
  confiner: PathConfiner,
  path: string,
  expectedHash: string | undefined,
): Engram {
  const full = confiner.resolve(path, "engram", path);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(full, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" || code === "ENOTDIR"
        ? "missing"
        : code === "EISDIR"
          ? "a folder, not a file"
          : typeof code === "string"
            ? `cannot be read (${code})`
            : "not valid JSON";
    throw new StateError(`${path}: ${why}; run director verify${setAsideHint(path)}`, {
      cause: error,
    });
  }
  const parsed = schema.safeParse(json);
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

type EngramSchema = typeof import("../schema/engram.js")["Engram"];

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

/** Loads the engrams of the given entries, in the entries' order. */
export async function loadEngrams(
  repoDir: string,
  entries: readonly CatalogEntry[],
): Promise<Map<string, Engram>> {
  const out = new Map<string, Engram>();
  if (entries.length === 0) return out;
  const { Engram } = await import("../schema/engram.js");
  const confiner = new PathConfiner(repoDir);
  for (const entry of entries) {
    const expected = engramPath(entry.scope, entry.version, entry.engram_id);
    if (entry.path !== expected) {
      throw new StateError(
        `${CATALOG_PATH}: the entry of ${entry.engram_id} names ${JSON.stringify(entry.path)}, expected ${expected}; run director verify`,
      );
    }
    out.set(entry.engram_id, readEngramWith(Engram, confiner, entry.path, entry.hash));
  }
  return out;
}

/** Every file under memory/st and memory/lt, as repository-relative POSIX paths, sorted. */
export async function listTierFiles(repoDir: string): Promise<string[]> {
  const out: string[] = [];
  const confiner = new PathConfiner(repoDir);
  for (const scope of SCOPES) {
    // A tier that is itself a link is listed by `listMemoryLinks`, never walked.
    try {
      confiner.refuseLinks(tierDir(scope), tierDir(scope));
    } catch {
      continue;
    }
    await collectFiles(repoDir, tierDir(scope), out);
  }
  return out.sort();
}

/**
 * Every symbolic link under memory/ (the folder itself included) and MEMORY.md, as
 * repo-relative paths, sorted: links are never followed, and verify and check report these.
 */
export async function listMemoryLinks(repoDir: string): Promise<string[]> {
  const links: string[] = [];
  for (const top of [MEMORY_DIR, FOCUS_PATH]) {
    const st = await lstatOf(join(repoDir, top)).catch(() => undefined);
    if (st?.isSymbolicLink()) links.push(top);
  }
  if (!links.includes(MEMORY_DIR)) await collectFiles(repoDir, MEMORY_DIR, [], links);
  return links.sort();
}

/**
 * Every file under `rel` (dot files too), as repo-relative paths: a plain walk, which starts
 * far faster than a glob library for the one pattern needed. Symbolic links are never
 * followed: they go to `links` when given, else nowhere.
 */
async function collectFiles(
  root: string,
  rel: string,
  out: string[],
  links?: string[],
): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await entriesOf(join(root, rel));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw error;
  }
  for (const entry of entries) {
    const path = `${rel}/${entry.name}`;
    if (entry.isSymbolicLink()) links?.push(path);
    else if (entry.isDirectory()) await collectFiles(root, path, out, links);
    else if (entry.isFile()) out.push(path);
  }
}

export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readText(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw withPath(error, path);
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
  source = "the plan of this cycle",
): Promise<void> {
  // Every path confined before the first change: a plan naming one bad path changes nothing.
  const confiner = new PathConfiner(repoDir);
  for (const [i, w] of writes.entries())
    confiner.resolve(w.path, "memory", `${source}: writes[${i}].path`);
  for (const [i, path] of deletes.entries())
    confiner.resolve(path, "memory", `${source}: deletes[${i}]`);
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
