import type { Scope } from "../../schema/engram.js";

/**
 * Where the durable memory lives in a repository, spelled once. Every path is repo-relative
 * and POSIX; adapters join them onto a directory, the core compares them as strings.
 */

/** The folder that holds the catalog and both tiers. */
export const MEMORY_DIR = "memory";

/** The catalog: every engram with its path and hash, and the catalog's own hash. */
export const CATALOG_PATH = `${MEMORY_DIR}/catalog.json`;

/** The focus view (MEMORY.md) at the repository's root. */
export const FOCUS_PATH = "MEMORY.md";

/** The tiers in the order they are listed and evicted: short-term, then long-term. */
export const SCOPES: readonly Scope[] = ["st", "lt"];

/** The folder of one tier: `memory/st` or `memory/lt`. */
export function tierDir(scope: Scope): string {
  return `${MEMORY_DIR}/${scope}`;
}

/** The file name of an engram, the same in every batch folder. */
export function engramFileName(engramId: string): string {
  return `engram_${engramId}.json`;
}

/** `memory/<scope>/<batch>/engram_<id>.json`. */
export function engramPath(scope: Scope, version: string, engramId: string): string {
  return `${tierDir(scope)}/${version}/${engramFileName(engramId)}`;
}

/** What `engramPath` builds: scope, batch id and engram id as groups 1 to 3. */
export const ENGRAM_PATH_PATTERN =
  /^memory\/(st|lt)\/(\d{8}-\d{6}Z)\/engram_(e_[0-9a-f]{32})\.json$/;

/** The empty `.gitkeep` files `director init` puts in the tiers: kept, never listed. */
export const TIER_GITKEEPS: readonly string[] = SCOPES.map((scope) => `${tierDir(scope)}/.gitkeep`);

/** A `.gitkeep` anywhere under a tier. */
export function isGitkeepPath(path: string): boolean {
  return /^memory\/(st|lt)\/(.+\/)?\.gitkeep$/.test(path);
}

/** The registry of people, projects and components that memory links to. */
export const REGISTRY_PATH = "config/registry.toml";

/*
 * Confinement. Every path that content (the catalog, the version log, a branch's tree) or
 * the state folder (a cycle's intent, the staging meta) names is checked here, by
 * `confinePath`, before anything opens, writes or removes it; `src/repo/confine.ts` adds the
 * file system's half (no symbolic link on the way). Nothing else decides whether a path is
 * safe.
 */

/** What a path is expected to name, each kind confined to its own folder. */
export type PathKind =
  /** An engram: `memory/<st|lt>/<batch>/engram_<id>.json`. */
  | "engram"
  /** A session document: `memory/{state,core,sessions,knowledge}/<name>.json`. */
  | "document"
  /** Any memory file the Director writes or removes: under `memory/`, or `MEMORY.md`. */
  | "memory"
  /** A staging tree of `director run --pr`, relative to the state folder: `staging-<name>`. */
  | "staging";

/** The folder of each kind of session document. */
export const DOCUMENT_FOLDERS = {
  state: `${MEMORY_DIR}/state`,
  core: `${MEMORY_DIR}/core`,
  session: `${MEMORY_DIR}/sessions`,
  knowledge: `${MEMORY_DIR}/knowledge`,
} as const;

/** A document's file name: a key or session id (no `/`, no leading dot), then `.json`. */
const DOCUMENT_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}\.json$/;
const STAGING_NAME = /^staging-[A-Za-z0-9_-]{1,64}$/;

/**
 * Why `path` is not a plain relative POSIX path (absolute, `.` or `..` segments, empty
 * segments, a backslash, NUL or another control character); undefined when it is one.
 */
export function pathShapeProblem(path: unknown): string | undefined {
  if (typeof path !== "string") return "expected a string";
  if (path === "") return "is empty";
  if (path.length > 1024) return "is longer than 1024 characters";
  // A backslash is a separator on Windows; a control character (NUL first) truncates or hides.
  if (hasControlOrBackslash(path)) return "holds a backslash or a control character";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "is absolute";
  for (const part of path.split("/")) {
    if (part === "") return "has an empty segment (a doubled or trailing /)";
    if (part === "." || part === "..") return `has a "${part}" segment`;
  }
  return undefined;
}

/**
 * Why `path` may not be used as a path of `kind`; undefined when it may. Pure: the file
 * system's half (no symbolic link on the way) is `src/repo/confine.ts`. `documentKind` also
 * pins a document to its kind's folder.
 */
export function confinePath(
  path: unknown,
  kind: PathKind,
  documentKind?: keyof typeof DOCUMENT_FOLDERS,
): string | undefined {
  const shape = pathShapeProblem(path);
  if (shape !== undefined) return shape;
  const p = path as string;
  switch (kind) {
    case "engram":
      return ENGRAM_PATH_PATTERN.test(p)
        ? undefined
        : "is not at memory/<st|lt>/<YYYYMMDD-HHMMSSZ>/engram_e_<32 hex>.json";
    case "document": {
      const folders = documentKind
        ? [DOCUMENT_FOLDERS[documentKind]]
        : Object.values(DOCUMENT_FOLDERS);
      const slash = p.lastIndexOf("/");
      const ok =
        folders.includes(p.slice(0, slash) as never) && DOCUMENT_NAME.test(p.slice(slash + 1));
      return ok ? undefined : `is not a <name>.json file in ${folders.join(" or ")}`;
    }
    case "memory":
      return p === FOCUS_PATH || p.startsWith(`${MEMORY_DIR}/`)
        ? undefined
        : `is neither under ${MEMORY_DIR}/ nor ${FOCUS_PATH}`;
    case "staging":
      return STAGING_NAME.test(p) ? undefined : "is not a staging-<name> folder";
  }
}

/** A path of a catalog that is not where its kind belongs: the field, and why. */
export interface CatalogPathProblem {
  field: string;
  path: unknown;
  problem: string;
}

/**
 * The first path of a catalog that is not where it belongs: an entry's path must be the one
 * its scope, version and engram_id give, a document's must be in its kind's folder.
 */
export function catalogPathProblem(catalog: {
  entries: readonly { scope: Scope; version: string; engram_id: string; path: string }[];
  documents?: readonly { kind: keyof typeof DOCUMENT_FOLDERS; path: string }[] | undefined;
}): CatalogPathProblem | undefined {
  for (const [i, e] of catalog.entries.entries()) {
    const problem = confinePath(e.path, "engram");
    const expected = engramPath(e.scope, e.version, e.engram_id);
    if (problem !== undefined || e.path !== expected) {
      return {
        field: `entries[${i}].path`,
        path: e.path,
        problem: problem ?? `should be ${expected} (from its scope, version and engram_id)`,
      };
    }
  }
  for (const [i, d] of (catalog.documents ?? []).entries()) {
    const problem = confinePath(d.path, "document", d.kind);
    if (problem !== undefined) return { field: `documents[${i}].path`, path: d.path, problem };
  }
  return undefined;
}

function hasControlOrBackslash(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}

/**
 * Why `[state] dir` cannot be the state folder: it must be a plain relative folder inside the
 * repository (not the repository itself, not absolute, no `..`), and neither in `.git` nor in
 * memory/. A trailing `/` is allowed. Git's part (untracked, ignored) and the file system's
 * (no link on the way) are checked where the repository is at hand (`src/state/state-folder.ts`).
 */
export function stateDirProblem(dir: string): string | undefined {
  const plain = dir.endsWith("/") ? dir.slice(0, -1) : dir;
  if (plain === "" || plain === ".") return "is the repository itself";
  const shape = pathShapeProblem(plain);
  if (shape !== undefined) return shape;
  const top = plain.split("/")[0];
  if (top === ".git" || top === MEMORY_DIR || plain === FOCUS_PATH) {
    return `is inside ${top === ".git" ? ".git" : "durable memory"}`;
  }
  return undefined;
}
