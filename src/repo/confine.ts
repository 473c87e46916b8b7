import { lstatSync } from "node:fs";
import { join } from "node:path";
import { confinePath, type DOCUMENT_FOLDERS, type PathKind } from "../core/model/paths.js";
import { StateError, withPath } from "../errors.js";
import { readText } from "../fs-async.js";

/**
 * The file system's half of confinement: a path that passed `confinePath` (its shape and
 * folder) must also reach its file through real folders only. A symbolic link anywhere below
 * the root (the link itself, or a folder on the way) is refused before any read, write or
 * removal: a link in a repository or a restored state folder is content, and content may come
 * from an attacker's pull request.
 */
export class PathConfiner {
  /** Folders below the root already seen to be real folders (or absent). */
  private readonly real = new Set<string>();

  constructor(readonly root: string) {}

  /**
   * The absolute path of `rel` (repo- or state-relative POSIX) under the root, once it is a
   * path of `kind` with no link on the way. `source` names where the path came from, for the
   * message (`memory/catalog.json: entries[3].path`).
   */
  resolve(
    rel: unknown,
    kind: PathKind,
    source: string,
    documentKind?: keyof typeof DOCUMENT_FOLDERS,
  ): string {
    const problem = confinePath(rel, kind, documentKind);
    if (problem !== undefined) {
      throw new StateError(
        `${source}: ${JSON.stringify(rel)} ${problem}: refused, nothing was read or written there; run director verify`,
      );
    }
    this.refuseLinks(rel as string, source);
    return join(this.root, rel as string);
  }

  /** Throws when a component of `rel` below the root is a symbolic link. */
  refuseLinks(rel: string, source: string): void {
    const parts = rel.split("/");
    let at = this.root;
    for (let i = 0; i < parts.length; i++) {
      at = join(at, parts[i] as string);
      const last = i === parts.length - 1;
      if (!last && this.real.has(at)) continue;
      let link: boolean;
      try {
        link = lstatSync(at).isSymbolicLink();
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Nothing there yet: whatever is created below it is created as a real folder.
        if (code === "ENOENT" || code === "ENOTDIR") return;
        throw error;
      }
      if (link) {
        const here = parts.slice(0, i + 1).join("/");
        throw new StateError(
          `${source}: ${here} is a symbolic link: links are never followed in memory/, MEMORY.md or the state folder; replace it with the real ${last ? "file" : "folder"} (git checkout restores it) or remove it`,
        );
      }
      if (!last) this.real.add(at);
    }
  }
}

/** `new PathConfiner(root).resolve(...)`, for one path. */
export function confine(
  root: string,
  rel: unknown,
  kind: PathKind,
  source: string,
  documentKind?: keyof typeof DOCUMENT_FOLDERS,
): string {
  return new PathConfiner(root).resolve(rel, kind, source, documentKind);
}

/**
 * The text of the memory file `rel` under `root`, read only once it is confined (`kind`) and
 * reached through no link; undefined when it does not exist.
 */
export async function readConfinedText(
  root: string,
  rel: string,
  kind: PathKind = "memory",
  confiner: PathConfiner = new PathConfiner(root),
): Promise<string | undefined> {
  const full = confiner.resolve(rel, kind, rel);
  try {
    return await readText(full);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw withPath(error, rel);
  }
}
