import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import { fsyncDirSync, writeFileAtomicSync } from "./atomic.js";
import { type EntryKind, entryKind } from "./entry-kind.js";
import { randomHex } from "./random-id.js";
import { spoolSenderTag } from "./spool-share.js";

/**
 * The local spool, the embedded bus: every `worker emit` writes its own file (temp, fsync,
 * rename), so concurrent writers never contend for a lock and a crash leaves either a whole
 * file or none. The Director drains files in name order and removes each only after the
 * journal holds its events.
 */
export function writeSpoolFile(
  spoolDir: string,
  lines: readonly string[],
  now: number,
  sender?: string,
): string {
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const text = lines.map((l) => `${l}\n`).join("");
  // The sender and the size in the name: a sender's share is counted from a listing alone
  // (`spool-share.ts`), with no stat of each file a stranded spool holds.
  const tag = sender === undefined ? "" : `-${Buffer.byteLength(text)}.${spoolSenderTag(sender)}`;
  const random = randomHex(6);
  const name = `${String(now).padStart(15, "0")}-${process.pid}-${random}${tag}.ndjson`;
  const path = join(spoolDir, name);
  // Only this user reads what its workers wrote: 0600, like the quarantine.
  writeFileAtomicSync(path, text, 0o600);
  return path;
}

/** The spool's files to drain, in name order: regular `*.ndjson` files only. */
export function listSpoolFiles(spoolDir: string): string[] {
  return spoolEntries(spoolDir)
    .filter((e) => e.kind === "file")
    .map((e) => join(spoolDir, e.name));
}

/** The folder of a spool where entries that are not a worker's file are moved. */
export const SPOOL_SET_ASIDE = "set-aside";

/** A `*.ndjson` entry of the spool that is not a regular file, and where it went. */
export interface SpoolOddity {
  name: string;
  /** What it is: `symbolic link`, `fifo`, `socket`, `directory`, `device`. */
  kind: EntryKind;
  /** Where it is now, relative to the spool; null when it could not be moved (left, never read). */
  moved_to: string | null;
}

/**
 * Moves the spool's `*.ndjson` entries that no worker wrote (a link, a FIFO, a folder, a
 * socket or a device: a restored or hostile state folder) into `set-aside/`, so that none of
 * them can stop a drain (a FIFO blocks a read for ever) and each is reported once. Never
 * opened, never followed. An entry that cannot be moved stays where it is, still never read.
 */
export function setAsideOddSpoolEntries(spoolDir: string): SpoolOddity[] {
  const odd = spoolEntries(spoolDir).filter((e) => e.kind !== "file");
  if (odd.length === 0) return [];
  const aside = join(spoolDir, SPOOL_SET_ASIDE);
  let usable = true;
  try {
    mkdirSync(aside, { mode: 0o700 });
  } catch (error) {
    // Only a real folder of our own: a link here would carry the entries elsewhere.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !lstatSync(aside).isDirectory()) {
      usable = false;
    }
  }
  const out: SpoolOddity[] = [];
  for (const { name, kind } of odd) {
    let movedTo: string | null = null;
    if (usable) {
      const target = freeName(aside, name);
      try {
        renameSync(join(spoolDir, name), join(aside, target));
        movedTo = `${SPOOL_SET_ASIDE}/${target}`;
      } catch {}
    }
    out.push({ name, kind, moved_to: movedTo });
  }
  if (out.some((o) => o.moved_to !== null)) {
    fsyncDirSync(aside);
    fsyncDirSync(spoolDir);
  }
  return out;
}

/** `name`, or `name.1`, `name.2`...: the first that `dir` does not hold. */
function freeName(dir: string, name: string): string {
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? name : `${name}.${n}`;
    if (!existsSync(join(dir, candidate))) return candidate;
  }
}

/** The spool's `*.ndjson` entries (dot files are writers' temp files), by name, with their kind. */
function spoolEntries(spoolDir: string): { name: string; kind: EntryKind }[] {
  if (!existsSync(spoolDir)) return [];
  const out: { name: string; kind: EntryKind }[] = [];
  for (const entry of readdirSync(spoolDir, { withFileTypes: true })) {
    if (!entry.name.endsWith(".ndjson") || entry.name.startsWith(".")) continue;
    out.push({ name: entry.name, kind: entryKind(entry, join(spoolDir, entry.name)) });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Opens a spool file to read it: never through a link, never blocking on a FIFO, and only if
 * it is (still) a regular file. Undefined when it is not; the caller closes the descriptor.
 */
export function openSpoolFile(path: string): { fd: number; bytes: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP" || code === "ENXIO") return undefined;
    throw error;
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    return undefined;
  }
  return { fd, bytes: stat.size };
}

export function removeSpoolFiles(spoolDir: string, paths: readonly string[]): void {
  if (paths.length === 0) return;
  for (const path of paths) {
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  fsyncDirSync(spoolDir);
}
