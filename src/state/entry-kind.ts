import { type Dirent, lstatSync, type Stats } from "node:fs";

/** What a folder entry is, as a message names it. */
export type EntryKind =
  | "file"
  | "directory"
  | "symbolic link"
  | "fifo"
  | "socket"
  | "device"
  | "unknown";

/**
 * What the entry at `path` is, from its listing, never following it. Some file systems do not
 * say in the listing: the entry itself is asked then (`lstat`). `unknown`: gone meanwhile.
 */
export function entryKind(entry: Dirent | Stats, path: string): EntryKind {
  if (entry.isFile()) return "file";
  if (entry.isSymbolicLink()) return "symbolic link";
  if (entry.isDirectory()) return "directory";
  if (entry.isFIFO()) return "fifo";
  if (entry.isSocket()) return "socket";
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return "device";
  if (!("dev" in entry)) {
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st !== undefined) return entryKind(st, path);
  }
  return "unknown";
}
