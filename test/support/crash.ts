import { existsSync, readFileSync, statSync } from "node:fs";
import type { Spawned } from "./bins.js";

/**
 * Kills `spawned` with SIGKILL `extraMs` after `trigger()` first returns true (polled every
 * millisecond). Nothing happens if the child exits first. Returns when the child has exited.
 */
export function killWhen(spawned: Spawned, trigger: () => boolean, extraMs: number): void {
  let fired = false;
  const timer = setInterval(() => {
    if (fired || !trigger()) return;
    fired = true;
    clearInterval(timer);
    setTimeout(() => spawned.child.kill("SIGKILL"), extraMs);
  }, 1);
  void spawned.done.finally(() => clearInterval(timer));
}

/** Kills `spawned` with SIGKILL after `ms` (measured from now). */
export function killAfter(spawned: Spawned, ms: number): void {
  const timer = setTimeout(() => spawned.child.kill("SIGKILL"), ms);
  void spawned.done.finally(() => clearTimeout(timer));
}

/** The size of a file, or -1 when it does not exist. */
export function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

/** Whether the lock file at `path` names `pid` as its holder. */
export function lockHeldBy(path: string, pid: number | undefined): boolean {
  if (pid === undefined || !existsSync(path)) return false;
  try {
    return Number.parseInt(readFileSync(path, "utf8"), 10) === pid;
  } catch {
    return false;
  }
}
