import { spawn } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import {
  processAlive,
  STATE_DIR_MODE,
  STATE_FILE_MODE,
  writeFileAtomicSync,
} from "../state/atomic.js";
import { fileSize } from "../state/capped-log.js";
import { syncDir } from "./state-paths.js";
import type { TargetName } from "./target-names.js";

/**
 * `sync run --hook`: for a session-start hook that must never hold the agent up. The hook
 * takes the hook lock, starts the run as a detached process, hands the lock to it and returns
 * at once; the run's output goes to `hook.log`. A second hook while one runs exits at once.
 * A run that finds the store down leaves everything queued for the next run, as any run does.
 */
export type HookResult =
  | { started: true; pid: number; log: string }
  | { started: false; held_by: number; reason: string };

/** What the detached run is told (through its environment) so it releases the lock it holds. */
export const HOOK_CHILD_ENV = "ENGRAM_SYNC_HOOK_CHILD";

export function hookPaths(ctx: RepoContext, target: TargetName): { lock: string; log: string } {
  const dir = join(syncDir(ctx), target);
  return { lock: join(dir, "hook.lock"), log: join(dir, "hook.log") };
}

export interface HookSpawn {
  /** The node binary and the `director` entry script that runs the sync. */
  node: string;
  entry: string;
  /** Arguments after the entry script: `sync run --target ... --repo ... --config ...`. */
  args: readonly string[];
  env: NodeJS.ProcessEnv;
}

export function startHook(ctx: RepoContext, target: TargetName, run: HookSpawn): HookResult {
  const { lock, log } = hookPaths(ctx, target);
  mkdirSync(dirname(lock), { recursive: true, mode: STATE_DIR_MODE });
  const holder = takeLock(lock);
  if (holder !== null) {
    return {
      started: false,
      held_by: holder,
      reason: `another sync hook is syncing ${target} (pid ${holder}); this one exits`,
    };
  }
  let out: number | undefined;
  try {
    // Bounded: one earlier log is kept, as hook.log.1.
    if (fileSize(log) > LOG_MAX_BYTES) renameSync(log, `${log}.1`);
    out = openSync(log, "a", STATE_FILE_MODE);
    const child = spawn(run.node, [run.entry, ...run.args], {
      detached: true,
      stdio: ["ignore", out, out],
      env: { ...run.env, [HOOK_CHILD_ENV]: lock },
      windowsHide: true,
    });
    // A failed start is reported below (no pid); its later 'error' event must not crash us.
    child.once("error", () => undefined);
    const pid = child.pid;
    if (pid === undefined) throw new Error("the detached sync did not start");
    // Handed over: the lock now names the process that syncs, alive as long as it runs.
    writeFileAtomicSync(lock, `${pid}\n`);
    child.unref();
    return { started: true, pid, log };
  } catch (error) {
    releaseHookLock(lock, process.pid);
    throw error;
  } finally {
    if (out !== undefined) closeSync(out);
  }
}

/** Removes the hook lock when it names `pid` (the detached run at its end). */
export function releaseHookLock(lock: string, pid: number): void {
  try {
    if (readPid(lock) === pid) unlinkSync(lock);
  } catch {}
}

/** Creates the lock with our pid; returns the live holder's pid when another hook holds it. */
function takeLock(path: string): number | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = readPid(path);
    if (holder !== null && processAlive(holder)) return holder;
    // Empty: a hook between creating and writing it, unless it died there long ago.
    if (holder === null && Date.now() - mtimeMs(path) < EMPTY_STALE_MS) return -1;
    // Left by a run that died: take it over once.
    try {
      unlinkSync(path);
    } catch {}
  }
  return readPid(path) ?? -1;
}

const EMPTY_STALE_MS = 5_000;
const LOG_MAX_BYTES = 1024 * 1024;

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function readPid(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
