import { isAbsolute, relative, resolve, sep } from "node:path";

/**
 * Whether `path` is `dir` or under it, by the path's segments: `..ci/engram.toml` is inside;
 * only `..` itself or a path under it leaves the folder. Paths are compared as given (resolve
 * links first where a link could lead out).
 */
export function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** `path` as a user reads it from `from`: relative when inside, absolute otherwise. */
export function shownPath(from: string, path: string): string {
  return isWithin(from, path) ? relative(from, path) || "." : resolve(path);
}
