import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import fg from "fast-glob";
import { applyFileChanges } from "../repo/memory-tree.js";
import { fsyncDirSync, removeStaleTemps, writeFileAtomicSync } from "../state/atomic.js";
import { type BufferMeta, EventBuffer } from "../state/buffer.js";
import { acquireLock } from "../state/lock.js";
import type { RepoContext } from "./context.js";

/** What a crash between planning and finishing a cycle needs to finish it on restart. */
export interface CycleIntent {
  through_seq: number;
  writes: { path: string; text: string }[];
  deletes: string[];
  meta: Partial<BufferMeta>;
}

/** Finishes a cycle interrupted by a crash: the plan is re-applied whole, then the buffer trimmed. */
export async function recoverIntent(ctx: RepoContext, buffer: EventBuffer): Promise<boolean> {
  if (!existsSync(ctx.paths.intent)) return false;
  const intent = JSON.parse(readFileSync(ctx.paths.intent, "utf8")) as CycleIntent;
  await finishCycle(ctx, buffer, intent);
  return true;
}

export async function finishCycle(
  ctx: RepoContext,
  buffer: EventBuffer,
  intent: CycleIntent,
): Promise<void> {
  await applyFileChanges(ctx.repoDir, intent.writes, intent.deletes);
  buffer.dropThrough(intent.through_seq, intent.meta, ctx.config.memory.dedup_window_events);
  unlinkSync(ctx.paths.intent);
  fsyncDirSync(join(ctx.paths.intent, ".."));
}

/** Temp files of writers killed mid-write, in the memory tree and the state folder. */
async function removeLeftovers(ctx: RepoContext): Promise<void> {
  const batchDirs = await fg(["memory/st/*", "memory/lt/*"], {
    cwd: ctx.repoDir,
    onlyDirectories: true,
    absolute: true,
  });
  removeStaleTemps([
    ctx.repoDir,
    join(ctx.repoDir, "memory"),
    ...batchDirs,
    join(ctx.paths.root, "buffer"),
    ctx.paths.spool,
    ctx.paths.root,
  ]);
}

/**
 * Runs `task` as the one writer of the buffer: takes the lock, clears temp files of killed
 * writers, opens the buffer and finishes any cycle a crash interrupted.
 */
export async function withDirectorState<T>(
  ctx: RepoContext,
  task: (buffer: EventBuffer) => Promise<T>,
  options: { retainEvents?: boolean } = {},
): Promise<T> {
  const lock = await acquireLock(ctx.paths.lock);
  try {
    await removeLeftovers(ctx);
    // Finishing an interrupted cycle needs the events in memory, whatever the task wants.
    const retainEvents = options.retainEvents !== false || existsSync(ctx.paths.intent);
    const buffer = EventBuffer.open(ctx.paths, { retainEvents });
    try {
      await recoverIntent(ctx, buffer);
      return await task(buffer);
    } finally {
      buffer.closeJournal();
    }
  } finally {
    lock.release();
  }
}

/** Makes the plan durable before any memory file changes, then carries it out. */
export async function commitCycle(
  ctx: RepoContext,
  buffer: EventBuffer,
  intent: CycleIntent,
): Promise<void> {
  writeFileAtomicSync(ctx.paths.intent, JSON.stringify(intent));
  await finishCycle(ctx, buffer, intent);
}
