import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fsPromises } from "../fs-async.js";

/** Folders of the state folder, and the state folder itself: only this user may enter them. */
export const STATE_DIR_MODE = 0o700;
/** Files of the state folder: only this user may read them (notes, keys, the sync queue). */
export const STATE_FILE_MODE = 0o600;

let counter = 0;
/** A temp file beside `path`, named so `removeStaleTemps` can clear it after a crash. */
export function tempName(path: string): string {
  counter++;
  return join(dirname(path), `.${process.pid}.${counter}.tmp`);
}

const TEMP_NAME = /^\.(\d+)\.\d+\.tmp$/;

/** Whether a process with this pid exists (EPERM: it does, but is not ours to signal). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes temp files that a killed writer left behind (their pid is gone). A live writer's
 * temp file is left alone: it is about to be renamed into place.
 */
export function removeStaleTemps(dirs: Iterable<string>): number {
  let removed = 0;
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = TEMP_NAME.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      try {
        unlinkSync(join(dir, name));
        removed++;
      } catch {}
    }
  }
  return removed;
}

/** Folders whose fsync waits for the end of `withDirSyncsDeferred` (undefined: none waits). */
let deferredDirs: Set<string> | undefined;

/** Makes a rename or unlink inside `dir` durable. */
export function fsyncDirSync(dir: string): void {
  if (deferredDirs !== undefined) {
    deferredDirs.add(dir);
    return;
  }
  syncDir(dir);
}

/**
 * Runs `fn` with the folder fsyncs of its renames and unlinks gathered, then fsyncs each
 * folder once. For a step whose every write a journal replays after a crash (a cycle
 * intent's writes to the state folder): their order among themselves does not matter, only
 * that all are durable before the intent is removed. Each file's own fsync still happens.
 */
export function withDirSyncsDeferred<T>(fn: () => T): T {
  if (deferredDirs !== undefined) return fn();
  const dirs = new Set<string>();
  deferredDirs = dirs;
  try {
    return fn();
  } finally {
    deferredDirs = undefined;
    for (const dir of dirs) syncDir(dir);
  }
}

function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Temp file, fsync, rename, fsync of the folder: readers see the old or the new file, whole.
 * `data` may come in pieces (strings written one after the other), so a large file is never
 * held as one string. Private (0600) by default: nearly every caller writes the state folder
 * (notes, queues, caches); a file of the repository itself passes 0o644. The temp file is
 * created with the mode, and umask can only take bits away, so no reader ever sees more.
 */
export function writeFileAtomicSync(
  path: string,
  data: string | Uint8Array | Iterable<string>,
  mode = STATE_FILE_MODE,
): void {
  const temp = tempName(path);
  const fd = openSync(temp, "w", mode);
  try {
    if (typeof data === "string") writeSync(fd, Buffer.from(data, "utf8"));
    else if (data instanceof Uint8Array) writeSync(fd, data);
    else for (const piece of data) writeSync(fd, piece);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {}
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
  fsyncDirSync(dirname(path));
}

/** Async variant, so many files can be written and synced concurrently. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = tempName(path);
  const handle = await fsPromises().open(temp, "w", 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fsPromises()
      .unlink(temp)
      .catch(() => {});
    throw error;
  }
  await handle.close();
  await fsPromises().rename(temp, path);
}

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsPromises().open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  });
  await Promise.all(workers);
}
