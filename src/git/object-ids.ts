/**
 * Git object ids computed in process (SHA-1 over the object's header and body), so a writer
 * can skip objects the repository already has: a version snapshot differs from the previous
 * one by a few files, and hashing is far cheaper than writing every object again.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync } from "node:zlib";
import type { GitRepo } from "./history.js";

function objectId(type: "blob" | "tree", body: Buffer): string {
  return createHash("sha1").update(`${type} ${body.length}\0`).update(body).digest("hex");
}

function loosePath(repo: GitRepo, oid: string): string {
  return join(repo.gitdir, "objects", oid.slice(0, 2), oid.slice(2));
}

/**
 * Stores an object loose, as git does (zlib of header and body, temp file then rename), unless
 * it is already stored loose (a packed copy is written again: harmless, only slower).
 */
function store(repo: GitRepo, type: "blob" | "tree", body: Buffer): string {
  const oid = objectId(type, body);
  const path = loosePath(repo, oid);
  if (existsSync(path)) return oid;
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body])));
  renameSync(temp, path);
  return oid;
}

/** Stores one text blob (unless stored already) and returns its id. */
export function writeTextBlobFast(repo: GitRepo, text: string): string {
  return store(repo, "blob", Buffer.from(text, "utf8"));
}

interface Folder {
  files: Map<string, Buffer>;
  folders: Map<string, Folder>;
}

// Git sorts tree entries by name, a folder's name compared as if it ended with "/".
function sortKey(name: string, folder: boolean): string {
  return folder ? `${name}/` : name;
}

/**
 * Writes text files as nested trees, only the objects not already stored, and returns the root
 * tree's id: the same trees `writeTextTree` writes (paths relative to the tree's root), without
 * an object library round trip per file.
 */
export function writeTextTreeFast(
  repo: GitRepo,
  files: readonly { path: string; text: string }[],
): string {
  const root: Folder = { files: new Map(), folders: new Map() };
  for (const file of files) {
    const parts = file.path.split("/");
    let folder = root;
    for (const name of parts.slice(0, -1)) {
      let next = folder.folders.get(name);
      if (!next) {
        next = { files: new Map(), folders: new Map() };
        folder.folders.set(name, next);
      }
      folder = next;
    }
    folder.files.set(parts.at(-1) as string, Buffer.from(file.text, "utf8"));
  }
  const write = (folder: Folder): string => {
    const entries: { name: string; mode: string; oid: string; folder: boolean }[] = [];
    for (const [name, blob] of folder.files) {
      const oid = store(repo, "blob", blob);
      entries.push({ name, mode: "100644", oid, folder: false });
    }
    for (const [name, sub] of folder.folders) {
      entries.push({ name, mode: "40000", oid: write(sub), folder: true });
    }
    entries.sort((a, b) => {
      const [x, y] = [sortKey(a.name, a.folder), sortKey(b.name, b.folder)];
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const body = Buffer.concat(
      entries.map((e) =>
        Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex")]),
      ),
    );
    return store(repo, "tree", body);
  };
  return write(root);
}
