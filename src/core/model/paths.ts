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
