import {
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { StateError } from "../errors.js";
import { processAlive, STATE_DIR_MODE } from "./atomic.js";

export interface Lock {
  release(): void;
  /** This acquisition took over the lock of a holder that died: it may have left temp files. */
  readonly tookOver: boolean;
}

/** A lock file with no pid this long after it was written: its creator died first, or none wrote it. */
const EMPTY_LOCK_STALE_MS = 5_000;
/** A takeover guard this old: its taker died inside (it needs microseconds). */
const GUARD_STALE_MS = 10_000;

export interface LockOptions {
  /** How long to wait for a live holder; 60 s by default. */
  timeoutMs?: number;
  /**
   * A holder that keeps the lock for its whole life (`director serve`): others fail at once
   * with a message that names it instead of waiting for a release that will not come.
   */
  longLived?: boolean;
  /** What the holder runs (`director run`), written into the lock for whoever waits on it. */
  purpose?: string | undefined;
  /** Called once when the lock is held by a live process and this one starts waiting. */
  onWait?: ((holder: LockHolder) => void) | undefined;
}

/** Who holds a lock, as its file says. */
export interface LockHolder {
  pid: number;
  /** What it runs, when the holder wrote it. */
  purpose: string | undefined;
}

/** What a long-lived holder writes after its pid and token. */
const LONG_LIVED = "serve";

/**
 * An exclusive lock on the state folder: one Director process writes the buffer at a time.
 * The file's first line holds the holder's pid, a token of this acquisition and, for
 * `director serve`, the word `serve`; a second line may say what the holder runs. A lock left by a killed process (its pid is gone) is taken over, safely
 * against other Directors doing the same: see `removeStaleLock`.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<Lock> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const token = process.getBuiltinModule("node:crypto").randomBytes(8).toString("hex");
  const purpose = options.purpose?.replace(/[\r\n]+/g, " ").trim();
  const content = `${process.pid} ${token}${options.longLived ? ` ${LONG_LIVED}` : ""}\n${purpose ? `${purpose}\n` : ""}`;
  let told = false;
  // A fresh clone of an initialized repository has no state folder yet.
  mkdirSync(dirname(path), { recursive: true, mode: STATE_DIR_MODE });
  let tookOver = false;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(path, content)) return heldLock(path, content, tookOver);
    // Every path through this loop passes the deadline: a lock that keeps changing hands,
    // or a dead holder's lock that reappears, must not keep this Director in it for good.
    if (attempt > 0 && Date.now() > deadline) throw lockHeld(path, readLock(path));
    const seen = readLock(path);
    if (seen === undefined) {
      // A link to nowhere exists for the exclusive create and not for the read: without
      // this, the loop spun for good without a word.
      if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
        throw new StateError(
          `${path}: a symbolic link where the lock belongs; engram never makes one and never follows it: remove it`,
        );
      }
      continue; // released meanwhile: try again at once
    }
    const holder = Number.parseInt(seen, 10);
    const [first = "", second] = seen.split("\n");
    // Taken over: try again at once. (Another taker busy with it: wait like everyone else.)
    if (isStale(path, holder)) {
      if (removeStaleLock(path, seen)) {
        tookOver = true;
        continue;
      }
    } else if (first.trim().split(" ")[2] === LONG_LIVED) {
      throw new StateError(
        `${path}: held by director serve (pid ${holder}), which takes the events and runs the cycles of this repository itself; send to it with --bus tcp://, or stop it (SIGTERM) first`,
        { code: "lock_held" },
      );
    } else if (!told && Number.isInteger(holder)) {
      // Once per acquisition: a waiter that polls every 25 ms must not repeat itself.
      told = true;
      const doing = second?.trim();
      options.onWait?.({
        pid: holder,
        purpose: doing === undefined || doing === "" ? undefined : doing,
      });
    }
    if (Date.now() > deadline) throw lockHeld(path, seen);
    await new Promise((resolve) => setTimeout(resolve, 25 + Math.floor(Math.random() * 25)));
  }
}

function lockHeld(path: string, seen: string | undefined): StateError {
  const holder = Number.parseInt(seen ?? "", 10);
  return new StateError(
    `${path}: held by another Director (pid ${Number.isInteger(holder) ? holder : "unknown"}); wait for it to finish or remove the file if that process is gone`,
    { code: "lock_held" },
  );
}

/** Creates the lock file with our content; false when it exists. */
function tryCreate(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (error) {
    // An empty lock would hold everyone off for a while: take it away again.
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {}
    throw error;
  }
  closeSync(fd);
  return true;
}

function heldLock(path: string, content: string, tookOver: boolean): Lock {
  let released = false;
  return {
    tookOver,
    release() {
      if (released) return;
      released = true;
      try {
        // Only our own lock: never one another Director holds.
        if (readLock(path) === content) unlinkSync(path);
      } catch {}
    },
  };
}

/** The lock file's content; undefined when there is none. */
function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function isStale(path: string, holder: number): boolean {
  if (Number.isInteger(holder) && holder > 0) return !processAlive(holder);
  // No pid: a creator that died between creating the file and writing it, or a file no
  // Director wrote (a restored state folder), once old enough. A live creator writes its pid
  // within microseconds; waiting out the full timeout on every run would stop the Director.
  return ageMs(path) > EMPTY_LOCK_STALE_MS;
}

/**
 * Removes the lock only if it still holds `stale`, the content judged dead. Two Directors
 * may judge the same lock dead; without care the slower one would remove the lock the
 * faster one has just created in its place. So the removal happens under a guard file named
 * after the stale content (created exclusively: one taker at a time per dead holder), and
 * the content is read again under it: a lock that changed meanwhile belongs to someone alive.
 * False when another taker holds the guard.
 */
export function removeStaleLock(path: string, stale: string): boolean {
  const guard = `${path}.takeover-${guardId(stale)}`;
  let fd: number;
  try {
    fd = openSync(guard, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another taker is at it; a guard left by a taker that died inside is cleared.
    if (ageMs(guard) > GUARD_STALE_MS) {
      try {
        unlinkSync(guard);
      } catch {}
    }
    return false;
  }
  closeSync(fd);
  try {
    if (readLock(path) === stale) unlinkSync(path);
  } finally {
    unlinkSync(guard);
  }
  return true;
}

/** A file-name-safe id of a lock's content (pid and token, or whatever an old version wrote). */
function guardId(content: string): string {
  const id = content.trim().replace(/[^A-Za-z0-9]+/g, "-");
  return id.length > 0 ? id.slice(0, 64) : "empty";
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
