/**
 * Which dependencies a commit added or removed, read from its manifests before and after:
 * `package.json` (every dependency section), `go.mod` (direct requirements), `pyproject.toml`
 * (the project's, Poetry's and dependency groups' requirements) and `requirements*.txt`. A
 * library swapped for another shows here whatever the message says. Pure.
 */

import { type DependencyChange, pathKind } from "./evidence.js";

export type { DependencyChange };

/** The manifests whose dependencies are read, by file name. */
const READ = /^(package\.json|go\.mod|pyproject\.toml|requirements[\w.-]*\.txt)$/i;

/** Whether the dependencies of a manifest of this name are read. */
export function readsDependencies(path: string): boolean {
  return READ.test(path.slice(path.lastIndexOf("/") + 1));
}

/**
 * Whether the import reads this path's dependencies: a manifest it reads, and the project's
 * own (not an example's, a test fixture's or a docs site's).
 */
export function isReadManifest(path: string): boolean {
  return readsDependencies(path) && pathKind(path) === "manifest";
}

const PACKAGE_SECTIONS = [
  "dependencies",
  "devDependencies",
  "peerDependencies",
  "optionalDependencies",
] as const;

/**
 * The dependency names a manifest declares; undefined when its text cannot be read as one
 * (a syntax error mid-history, a file of another kind under the same name).
 */
export function dependencyNames(path: string, text: string): Set<string> | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (name === "package.json") return packageNames(text);
  if (name === "go.mod") return goNames(text);
  if (name === "pyproject.toml") return pyprojectNames(text);
  if (READ.test(name)) return requirementNames(text.split("\n"));
  return undefined;
}

function packageNames(text: string): Set<string> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null) return undefined;
  const out = new Set<string>();
  for (const section of PACKAGE_SECTIONS) {
    const deps = (json as Record<string, unknown>)[section];
    if (typeof deps === "object" && deps !== null) for (const k of Object.keys(deps)) out.add(k);
  }
  return out;
}

const GO_REQUIRE = /^\s*(?:require\s+)?([\w.-]+\.[\w-]+\/[\w./~-]+)\s+v\S+\s*(\/\/\s*indirect)?/;

function goNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split("\n")) {
    const m = GO_REQUIRE.exec(line);
    if (m && m[2] === undefined) out.add(m[1] as string);
  }
  return out;
}

/** A requirement's name: `Django>=4.2`, `psycopg[binary]==3.2`, `"uvicorn ; python_version"`. */
const REQUIREMENT = /^\s*"?([A-Za-z0-9][\w.-]*)\s*(\[[^\]]*\])?\s*(?:[=<>!~;@"]|$)/;

function requirementNames(lines: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const line of lines) {
    if (/^\s*(#|-)/.test(line)) continue;
    const m = REQUIREMENT.exec(line);
    if (m) out.add(normalizePython(m[1] as string));
  }
  return out;
}

/**
 * pyproject's requirements: the strings of `dependencies = [...]` arrays (the project's,
 * optional ones' and dependency groups'), and the keys of Poetry's dependency tables.
 */
function pyprojectNames(text: string): Set<string> {
  const out = new Set<string>();
  let table = "";
  let inArray = false;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "");
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*$/.exec(line);
    if (header) {
      table = (header[1] as string).trim();
      inArray = false;
      continue;
    }
    const poetry = /^tool\.poetry\.(dev-)?(group\.[\w-]+\.)?dependencies$/.test(table);
    if (poetry) {
      const key = /^\s*([A-Za-z0-9][\w.-]*)\s*=/.exec(line)?.[1];
      if (key !== undefined && key.toLowerCase() !== "python") out.add(normalizePython(key));
      continue;
    }
    const opens = /^\s*(dependencies|[\w-]+)\s*=\s*\[(.*)$/.exec(line);
    const arrayTable =
      table === "project" ||
      table === "project.optional-dependencies" ||
      table === "dependency-groups";
    if (opens && arrayTable && (table !== "project" || opens[1] === "dependencies")) {
      inArray = !/\]\s*$/.test(opens[2] as string);
      for (const s of quoted(opens[2] as string)) addRequirement(out, s);
      continue;
    }
    if (inArray) {
      for (const s of quoted(line)) addRequirement(out, s);
      if (/\]\s*$/.test(line)) inArray = false;
    }
  }
  return out;
}

function quoted(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? "");
}

function addRequirement(out: Set<string>, requirement: string): void {
  const name = /^\s*([A-Za-z0-9][\w.-]*)/.exec(requirement)?.[1];
  if (name !== undefined) out.add(normalizePython(name));
}

/** PEP 503: names compare case-insensitively, with runs of `-`, `_`, `.` alike. */
function normalizePython(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/**
 * What a commit's manifests added and removed, from each manifest's text before and after
 * (undefined where it did not exist or could not be read). A name removed from one manifest
 * and added to another moved and counts as neither; type packages (`@types/x`) and a package
 * that only changed its scope (`@zeit/ncc` to `@vercel/ncc`) count as nothing.
 */
export function dependencyChange(
  manifests: readonly { path: string; before?: string; after?: string }[],
): DependencyChange | undefined {
  const added = new Set<string>();
  const removed = new Set<string>();
  for (const { path, before, after } of manifests) {
    const was = before === undefined ? new Set<string>() : dependencyNames(path, before);
    const is = after === undefined ? new Set<string>() : dependencyNames(path, after);
    // A manifest that does not parse on one side says nothing about what changed.
    if (was === undefined || is === undefined) continue;
    for (const n of is) if (!was.has(n)) added.add(n);
    for (const n of was) if (!is.has(n)) removed.add(n);
  }
  // A package its owner moved to another scope (`@zeit/ncc` to `@vercel/ncc`) is the same one.
  const moved = new Set<string>();
  for (const r of removed) {
    for (const a of added) {
      if (r.startsWith("@") && a.startsWith("@") && unscoped(r) === unscoped(a)) {
        moved.add(r).add(a);
      }
    }
  }
  const counted = (n: string) => NAME.test(n) && !n.startsWith("@types/") && !moved.has(n);
  const change = {
    added: [...added].filter((n) => counted(n) && !removed.has(n)).sort(),
    removed: [...removed].filter((n) => counted(n) && !added.has(n)).sort(),
  };
  return change.added.length === 0 && change.removed.length === 0 ? undefined : change;
}

/**
 * What a dependency's name looks like in any of these ecosystems (npm's at most 214 characters,
 * a Go module path, a Python project): a key of another shape, planted or broken, is not one,
 * and never reaches a decision's text.
 */
const NAME = /^[@\w][\w@./~+-]{0,213}$/;

function unscoped(name: string): string {
  return name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
}

/**
 * A decision the commit's words leave unexplained, given what its manifests say where they show
 * a library switched ("adopted a, b and 2 more; dropped c"). The switch alone makes no decision:
 * read that way it did not carry to the held-out histories (the corpus README's ninth round).
 */
export function withDependencies<T extends { title: string; rationale?: string }>(
  decision: T,
  changes: { dependencies?: DependencyChange } | undefined,
): T {
  if (decision.rationale) return decision;
  const switched = switchedDependencies(changes);
  return switched === undefined ? decision : { ...decision, rationale: switched };
}

function switchedDependencies(
  changes: { dependencies?: DependencyChange } | undefined,
): string | undefined {
  const deps = changes?.dependencies;
  if (deps === undefined || deps.added.length === 0 || deps.removed.length === 0) return undefined;
  const list = (names: readonly string[]) =>
    names.length <= 3
      ? names.join(", ")
      : `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`;
  return `adopted ${list(deps.added)}; dropped ${list(deps.removed)}`;
}
