import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { StateError } from "../errors.js";
import { processAlive } from "./atomic.js";

export interface Lock {
  release(): void;
}

/**
 * An exclusive lock on the state folder: one Director process writes the buffer at a time.
 * A lock left by a killed process (its pid is gone) is taken over.
 */
export async function acquireLock(path: string, timeoutMs = 60_000): Promise<Lock> {
  const deadline = Date.now() + timeoutMs;
  // A fresh clone of an initialized repository has no state folder yet.
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {}
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(readFileSync(path, "utf8"), 10);
    } catch {}
    if (Number.isInteger(holder) && holder > 0 && !processAlive(holder)) {
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    if (Date.now() > deadline) {
      throw new StateError(
        `${path}: held by another Director (pid ${Number.isNaN(holder) ? "unknown" : holder}); wait for it to finish or remove the file if that process is gone`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25 + Math.floor(Math.random() * 25)));
  }
}
