/**
 * Reading files without `node:fs/promises`: that module brings readline and streams with it,
 * about 2 ms of a command's start, and the frequent commands only read a few files. The
 * callback API of `node:fs` reads them the same way (libuv's thread pool, the same errors).
 */
import {
  close,
  constants,
  type Dirent,
  fstat,
  lstat,
  open,
  readdir,
  readFile,
  type Stats,
} from "node:fs";

/** A callback of `node:fs` as a promise. */
function settle<T>(run: (done: (error: Error | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    run((error, value) => (error ? reject(error) : resolve(value)));
  });
}

/** A file's text (UTF-8). */
export function readText(path: string): Promise<string> {
  return settle((done) => readFile(path, "utf8", done));
}

/** A file's bytes. */
export function readBytes(path: string): Promise<Buffer> {
  return settle((done) => readFile(path, done));
}

/** What is at `path`, links not followed. */
export function lstatOf(path: string): Promise<Stats> {
  return settle((done) => lstat(path, done));
}

/** A folder's entries, with their types. */
export function entriesOf(path: string): Promise<Dirent[]> {
  return settle((done) => readdir(path, { withFileTypes: true }, done));
}

/**
 * A plain file's text, or "" when `path` is anything else: opened without blocking, so a
 * FIFO put in its place never hangs the reader.
 */
export async function readPlainFileText(path: string): Promise<string> {
  const fd = await settle<number>((done) =>
    open(path, constants.O_RDONLY | constants.O_NONBLOCK, done),
  );
  try {
    const stats = await settle<Stats>((done) => fstat(fd, done));
    return stats.isFile() ? await settle<string>((done) => readFile(fd, "utf8", done)) : "";
  } finally {
    await settle<void>((done) => close(fd, (error) => done(error ?? null, undefined)));
  }
}

/** `node:fs/promises`, loaded when first needed rather than with the module that names it. */
export function fsPromises(): typeof import("node:fs/promises") {
  return process.getBuiltinModule("node:fs/promises");
}
