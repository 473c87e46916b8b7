import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";

let counter = 0;
function tempName(path: string): string {
  counter++;
  return join(dirname(path), `.${process.pid}.${counter}.tmp`);
}

/** Makes a rename or unlink inside `dir` durable. */
export function fsyncDirSync(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Temp file, fsync, rename, fsync of the folder: readers see the old or the new file, whole. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = tempName(path);
  const fd = openSync(temp, "w", mode);
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
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
  const handle = await open(temp, "w", 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(temp, path);
}

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
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
