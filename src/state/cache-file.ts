import { lstatSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { readPlainFileText } from "../fs-async.js";
import { STATE_DIR_MODE, writeFileAtomicSync } from "./atomic.js";

/**
 * A cache file's text; empty (no cache) when it cannot be read, whatever the reason. Opened
 * without blocking and read only when it is a plain file: a FIFO put there never hangs a cycle.
 */
export async function readCacheFile(path: string): Promise<string> {
  try {
    return await readPlainFileText(path);
  } catch {
    return "";
  }
}

/**
 * Writes a cache atomically. Only a speed-up: a cache that cannot be written costs the next
 * run a derivation, never this one its result. A folder in its place is left alone (no
 * rename replaces it).
 */
export function writeCacheFile(path: string, text: string): void {
  try {
    if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) return;
    mkdirSync(dirname(path), { recursive: true, mode: STATE_DIR_MODE });
    writeFileAtomicSync(path, text);
  } catch {}
}
