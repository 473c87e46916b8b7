/**
 * Git object ids computed in process (SHA-1 over the object's header and body), so a writer
 * can skip objects the repository already has: a version snapshot differs from the previous
 * one by a few files, and hashing is far cheaper than writing every object again.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync } from "node:zlib";
import { type GitRepo, rememberTree } from "./history.js";
import { PackBuilder } from "./pack-writer.js";

type ObjectType = "blob" | "tree" | "commit";

function loosePath(repo: GitRepo, oid: string): string {
  return join(repo.gitdir, "objects", oid.slice(0, 2), oid.slice(2));
}

/**
 * Objects are laid out (header and body) in this one buffer, reused from object to object: a
 * snapshot of a large memory stores a thousand files, and a fresh buffer for each body plus
 * another for header and body together piled up tens of MB until a garbage collection. An
 * object too large for it (a large catalog, a tree of many entries) gets a buffer of its own.
 */
const scratch = Buffer.allocUnsafeSlow(256 * 1024);

/**
 * The object as git hashes and stores it, `type size\0` then the body, in `scratch` when it
 * fits (valid until the next call). `bodyStart` is where the body begins.
 */
function objectBytes(
  type: ObjectType,
  body: string | Buffer,
): { bytes: Buffer; bodyStart: number } {
  const size = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length;
  const header = `${type} ${size}\0`;
  const total = header.length + size;
  const bytes = total <= scratch.length ? scratch.subarray(0, total) : Buffer.allocUnsafe(total);
  bytes.write(header, 0, "latin1");
  if (typeof body === "string") bytes.write(body, header.length, "utf8");
  else body.copy(bytes, header.length);
  return { bytes, bodyStart: header.length };
}

/**
 * Stores an object loose, as git does (zlib of header and body, temp file then rename), unless
 * it is already stored loose (a packed copy is written again: harmless, only slower). The
 * fastest zlib level: an object's id is the hash of its bytes, not of their compression, and
 * `git gc` packs loose objects anew whatever their level.
 */
function store(repo: GitRepo, type: ObjectType, body: string | Buffer, like?: string): string {
  const { bytes, bodyStart } = objectBytes(type, body);
  const oid = createHash("sha1").update(bytes).digest("hex");
  if (repo.pack?.has(oid)) return oid;
  const path = loosePath(repo, oid);
  if (existsSync(path)) return oid;
  if (repo.pack !== undefined) {
    // The pack keeps its bodies until it is written: a copy of its own, not the scratch (a
    // large object's bytes are its own already).
    const kept =
      bytes.buffer === scratch.buffer
        ? Buffer.from(bytes.subarray(bodyStart))
        : bytes.subarray(bodyStart);
    repo.pack.add(oid, type, kept, like);
  } else writeLoose(path, bytes);
  return oid;
}

function storeLoose(path: string, type: ObjectType, body: Buffer): void {
  writeLoose(path, objectBytes(type, body).bytes);
}

/** Writes an object's bytes (header and body), compressed, to its loose path. */
function writeLoose(path: string, bytes: Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, deflateSync(bytes, { level: 1 }));
  renameSync(temp, path);
}

/**
 * Git's `transfer.unpackLimit`: fewer objects than this are stored loose, unless some may be
 * stored as deltas (another version of a large file): only a pack holds those.
 */
const UNPACK_LIMIT = 100;

/**
 * Runs `task` with every object it stores gathered in memory, then writes them all at once:
 * as one pack, or loose when they are few (as git stores what it receives). Nothing may point
 * a ref at an object of the batch before this returns: the objects are on disk only then.
 */
export async function batchedObjects<T>(repo: GitRepo, task: () => Promise<T>): Promise<T> {
  if (repo.pack !== undefined) return task();
  const pack = new PackBuilder(UNPACK_LIMIT);
  repo.pack = pack;
  let result: T;
  try {
    result = await task();
  } finally {
    repo.pack = undefined;
  }
  if (pack.size >= UNPACK_LIMIT || pack.deltaCandidates > 0) pack.write(repo.gitdir);
  else for (const o of pack.objects) storeLoose(loosePath(repo, o.oid), o.type, o.body);
  return result;
}

/**
 * Stores one text blob (unless stored already) and returns its id. `path`, the file it is a
 * version of, lets a batch store it as a delta of an earlier version of that file.
 */
export function writeTextBlobFast(repo: GitRepo, text: string, path?: string): string {
  return store(repo, "blob", text, path);
}

interface Folder {
  /** Name to text and path: turned into bytes one at a time, as each is stored. */
  files: Map<string, { text: string; path: string }>;
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
    folder.files.set(parts.at(-1) as string, { text: file.text, path: file.path });
  }
  const write = (folder: Folder): string => {
    const entries: { name: string; mode: string; oid: string; folder: boolean }[] = [];
    for (const [name, file] of folder.files) {
      const oid = store(repo, "blob", file.text, file.path);
      entries.push({ name, mode: "100644", oid, folder: false });
    }
    for (const [name, sub] of folder.folders) {
      entries.push({ name, mode: "40000", oid: write(sub), folder: true });
    }
    const oid = store(repo, "tree", treeBody(entries));
    // A graft on this tree reads it from here: in a batch it is not on disk yet.
    rememberTree(
      repo,
      oid,
      entries.map((e) => ({
        mode: e.folder ? "040000" : e.mode,
        path: e.name,
        oid: e.oid,
        type: e.folder ? "tree" : "blob",
      })),
    );
    return oid;
  };
  return write(root);
}

/** A tree object's body: its entries in git's order, each `mode name\0` and the binary id. */
function treeBody(entries: { name: string; mode: string; oid: string; folder: boolean }[]): Buffer {
  entries.sort((a, b) => {
    const [x, y] = [sortKey(a.name, a.folder), sortKey(b.name, b.folder)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return Buffer.concat(
    entries.map((e) =>
      Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex")]),
    ),
  );
}

/**
 * Stores a tree of the given entries (as isomorphic-git reads them: `040000` for a folder)
 * unless stored already, and returns its id: the same object `git.writeTree` writes, without
 * its round trips through the file system.
 */
export function writeTreeFast(
  repo: GitRepo,
  entries: readonly { mode: string; path: string; oid: string; type: string }[],
): string {
  const body = treeBody(
    entries.map((e) => ({
      name: e.path,
      // Git writes a folder's mode without its leading zero.
      mode: e.mode.replace(/^0+/, ""),
      oid: e.oid,
      folder: e.type === "tree",
    })),
  );
  return store(repo, "tree", body);
}

/**
 * Stores a commit (author and committer the same, UTC) unless stored already, and returns its
 * id: byte for byte the object `git.writeCommit` writes for the same fields.
 */
export function writeCommitFast(
  repo: GitRepo,
  commit: {
    tree: string;
    parents: readonly string[];
    message: string;
    author: { name: string; email: string; timestamp: number };
  },
): string {
  const who = `${commit.author.name} <${commit.author.email}> ${commit.author.timestamp} +0000`;
  const head = [
    `tree ${commit.tree}`,
    ...commit.parents.map((p) => `parent ${p}`),
    `author ${who}`,
    `committer ${who}`,
  ].join("\n");
  const message = commit.message.endsWith("\n") ? commit.message : `${commit.message}\n`;
  return store(repo, "commit", Buffer.from(`${head}\n\n${message}`, "utf8"));
}
