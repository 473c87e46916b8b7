import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { MEMORY_DIR, SCOPES, tierDir } from "../core/model/paths.js";
import { DOCUMENT_DIRS } from "../core/versions/documents.js";
import { removeStaleTemps } from "../state/atomic.js";
import { EventBuffer } from "../state/buffer.js";
import type { SetAsideLine } from "../state/journal-set-aside.js";
import { acquireLock } from "../state/lock.js";
import { recoverIntent } from "./cycle-intent.js";

// The cycle's journal lives in cycle-intent.ts (below room.ts, which writes intents too).
export { type CycleIntent, commitCycle, readIntent } from "./cycle-intent.js";

/**
 * Temp files of writers killed mid-write, in the state folder and, when a Director may have
 * died mid-write (its lock was taken over, or a cycle was interrupted), in the memory trees.
 * Only a Director writes there, under the lock: a clean release leaves none, and listing
 * every batch folder of a large memory on each run would cost more than the cycle itself.
 */
function removeLeftovers(ctx: RepoContext, memoryTrees: boolean): void {
  const state = [join(ctx.paths.root, "buffer"), ctx.paths.spool, ctx.paths.root];
  if (!memoryTrees) {
    removeStaleTemps(state);
    return;
  }
  // The work tree, and the staging trees of `director run --pr` in the state folder.
  const trees = [ctx.repoDir];
  if (existsSync(ctx.paths.root)) {
    for (const entry of readdirSync(ctx.paths.root, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.startsWith("staging-")) {
        trees.push(join(ctx.paths.root, entry.name));
      }
    }
  }
  // The room of compactions for room holds flat files only.
  const room = join(ctx.paths.root, "room");
  const flat = existsSync(room) ? [room] : [];
  removeStaleTemps([...trees.flatMap(memoryDirs), ...flat, ...state]);
}

/** A memory tree's folders that writers put files in: its root, memory/, tiers and batches. */
function memoryDirs(tree: string): string[] {
  // Real folders only: a link is never followed (verify reports it).
  const isDir = (path: string) =>
    lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  if (!isDir(join(tree, MEMORY_DIR))) return [tree];
  const dirs = [tree, join(tree, MEMORY_DIR)];
  // The folders of session documents (memory/state, core, sessions, knowledge).
  for (const dir of DOCUMENT_DIRS) if (isDir(join(tree, dir))) dirs.push(join(tree, dir));
  for (const scope of SCOPES) {
    const tier = join(tree, tierDir(scope));
    if (!isDir(tier)) continue;
    dirs.push(tier);
    for (const entry of readdirSync(tier, { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push(join(tier, entry.name));
    }
  }
  return dirs;
}

/**
 * Runs `task` as the one writer of the buffer: takes the lock, clears temp files of killed
 * writers, opens the buffer and finishes any cycle a crash interrupted.
 */
export async function withDirectorState<T>(
  ctx: RepoContext,
  task: (buffer: EventBuffer) => Promise<T>,
  options: {
    retainEvents?: boolean;
    longLived?: boolean;
    /** Take what ingests compacted for room into the work tree at the end, when it publishes there. */
    settle?: boolean;
    /** The task publishes by pull request (`director run --pr`), whatever `memory.publish` says. */
    pullRequest?: boolean;
  } = {},
): Promise<T> {
  const caller = ctx.caller;
  const lock = await acquireLock(ctx.paths.lock, {
    longLived: options.longLived,
    purpose: caller?.command,
    onWait: caller
      ? (holder) =>
          caller.notice(
            `waiting for the Director lock, held by pid ${holder.pid}${holder.purpose ? ` (${holder.purpose})` : ""}; it is released when that command ends`,
          )
      : undefined,
  });
  try {
    removeLeftovers(ctx, lock.tookOver || existsSync(ctx.paths.intent));
    // Finishing an interrupted cycle needs the events in memory, whatever the task wants.
    const retainEvents = options.retainEvents !== false || existsSync(ctx.paths.intent);
    const buffer = EventBuffer.open(ctx.paths, {
      retainEvents,
      onSetAside: (lines) => reportSetAside(ctx, lines),
    });
    // Compaction for room, for every path that ingests under the lock (ingest, the spool,
    // the hub, NATS, git refs): engrams into the state folder, never into a memory tree.
    let compactedForRoom = false;
    buffer.roomMaker = async (event) => {
      // Loaded only when a budget is reached: the compaction engine is large.
      const { compactForRoom } = await import("./room.js");
      await compactForRoom(ctx, buffer, event, options.pullRequest === true);
      compactedForRoom = true;
    };
    try {
      await recoverIntent(ctx, buffer);
      const result = await task(buffer);
      // Where the repository publishes in its work tree, what was compacted for room is
      // written there before the lock is released, once for every compaction (not with --dry-run).
      if (compactedForRoom && options.settle !== false) {
        await (await import("./room.js")).settleRoom(ctx, buffer);
      }
      return result;
    } finally {
      buffer.closeJournal();
    }
  } finally {
    lock.release();
  }
}

/**
 * Says on stderr, one line each, which journal lines were set aside as no buffered event
 * (the file, its line and seq, the field and why): a restored or edited state folder's, never
 * loaded; the run goes on with every other line (`journal-set-aside.ts`).
 */
function reportSetAside(ctx: RepoContext, lines: readonly SetAsideLine[]): void {
  for (const l of lines) {
    const at = `line ${l.line}${l.seq === null ? "" : ` (seq ${l.seq})`}`;
    const where =
      l.moved_to === null
        ? "left in place (read-only)"
        : `set aside as ${relative(ctx.repoDir, l.moved_to)}, not loaded`;
    process.stderr.write(
      `engram: ${relative(ctx.repoDir, l.file)}: ${at}: ${l.field}: ${l.reason}: not a buffered event: ${where} (the journal keeps every other line)\n`,
    );
  }
}
