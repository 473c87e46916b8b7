/**
 * Whether a cycle has work, decided from the buffer's shape before any engram is read: a
 * no-op run loads this and not the compaction engine.
 */
import type { MemoryConfig } from "../../schema/config.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { secondsBetween } from "../model/time.js";

export type CompactionReason =
  | "none"
  | "hard-limit"
  | "soft-limit"
  | "rate-limited"
  | "forced"
  | "flushed"
  | "history";

export interface CompactionDecision {
  /** How many of the oldest events to compact (0: none). */
  take: number;
  reason: CompactionReason;
}

export interface BufferShape {
  /** Size in bytes of each buffered event, oldest first. */
  eventBytes: readonly number[];
  totalBytes: number;
  /**
   * Length of the prefix of the buffer that ends with its newest history-derived event (0:
   * none). The newest window protects a live swarm, not a history import.
   */
  historyThrough?: number;
}

/**
 * When and how much to compact. Over a hard budget: always, down to the low-water mark.
 * Over the soft (high-water) mark: only if the last compaction is older than
 * `compaction_min_interval_seconds`, so a burst of telemetry does not loop. The newest
 * `buffer_keep_recent_events` are never taken, except by a flush, which takes everything,
 * and except that events read from git history are always compacted, whatever the budgets
 * and the window, with every event before them: a bootstrap becomes memory in the next cycle.
 */
export function decideCompaction(
  buffer: BufferShape,
  memory: MemoryConfig,
  lastCompactionAt: string | undefined,
  now: string,
  force: boolean,
  flush = false,
): CompactionDecision {
  const decision = decideLiveCompaction(buffer, memory, lastCompactionAt, now, force, flush);
  const history = Math.min(buffer.historyThrough ?? 0, buffer.eventBytes.length);
  return history > decision.take ? { take: history, reason: "history" } : decision;
}

function decideLiveCompaction(
  buffer: BufferShape,
  memory: MemoryConfig,
  lastCompactionAt: string | undefined,
  now: string,
  force: boolean,
  flush: boolean,
): CompactionDecision {
  const count = buffer.eventBytes.length;
  // A flush (the end of a CI job or a session) takes the newest window too.
  if (flush) return { take: count, reason: count > 0 ? "flushed" : "none" };
  const compactable = Math.max(0, count - memory.buffer_keep_recent_events);
  if (compactable === 0) return { take: 0, reason: "none" };
  if (force) return { take: compactable, reason: "forced" };
  const hard = count > memory.buffer_max_events || buffer.totalBytes > memory.buffer_max_bytes;
  const high = memory.buffer_high_water_ratio;
  const soft =
    count > memory.buffer_max_events * high || buffer.totalBytes > memory.buffer_max_bytes * high;
  if (!hard) {
    if (!soft) return { take: 0, reason: "none" };
    if (
      lastCompactionAt !== undefined &&
      secondsBetween(lastCompactionAt, now) < memory.compaction_min_interval_seconds
    ) {
      return { take: 0, reason: "rate-limited" };
    }
  }
  const lowEvents = memory.buffer_max_events * memory.buffer_low_water_ratio;
  const lowBytes = memory.buffer_max_bytes * memory.buffer_low_water_ratio;
  let take = 0;
  let remainingBytes = buffer.totalBytes;
  while (take < compactable && (count - take > lowEvents || remainingBytes > lowBytes)) {
    remainingBytes -= buffer.eventBytes[take] as number;
    take++;
  }
  return { take, reason: hard ? "hard-limit" : "soft-limit" };
}

/** What a cycle knows before it reads any engram. */
export interface CycleTriggers {
  /** Events the compaction decision takes. */
  take: number;
  /** Recall signals the last cycle has not counted yet. */
  newSignals: boolean;
  /** MEMORY.md names the current catalog. */
  focusFresh: boolean;
  /** A tier is over its budget (see `overBudget`). */
  overBudget: boolean;
  /** The periodic MEMORY.md render is due. */
  focusDue: boolean;
}

/**
 * A cycle with nothing to do: nothing to compact, no new recall signal, every tier within its
 * budgets and MEMORY.md current. It ends there and writes nothing, without reading an engram.
 */
export function isIdleCycle(t: CycleTriggers): boolean {
  return t.take === 0 && !t.newSignals && t.focusFresh && !t.overBudget && !t.focusDue;
}

/** Why a run compacted nothing, for the person who expected memory from it. */
export interface NotCompacted {
  cause: "empty" | "newest-window" | "under-trigger" | "rate-limited";
  /** One sentence naming the figures and the config key that decided it. */
  reason: string;
  /** What compacts the buffer now. */
  hint: string;
}

/**
 * The reason behind a decision that took nothing (null when it took something): the empty
 * buffer, the newest window that compaction never touches, a buffer under its soft trigger,
 * or the rate limit.
 */
export function explainNoCompaction(
  decision: CompactionDecision,
  buffer: BufferShape,
  memory: MemoryConfig,
  lastCompactionAt: string | undefined,
  now: string,
): NotCompacted | null {
  if (decision.take > 0) return null;
  const count = buffer.eventBytes.length;
  const flush = "director run --flush compacts the whole buffer now";
  if (count === 0) {
    return { cause: "empty", reason: "the buffer is empty", hint: "emit or ingest events first" };
  }
  const keep = memory.buffer_keep_recent_events;
  if (count <= keep) {
    return {
      cause: "newest-window",
      reason: `${count === 1 ? "the 1 event is" : `all ${count} events are`} inside the newest window (buffer_keep_recent_events = ${keep})`,
      hint: flush,
    };
  }
  const force = `director run --force compacts all but the newest ${keep} now; ${flush}`;
  if (decision.reason === "rate-limited" && lastCompactionAt !== undefined) {
    const seconds = Math.round(secondsBetween(lastCompactionAt, now));
    return {
      cause: "rate-limited",
      reason: `the last compaction was ${seconds} s ago, within compaction_min_interval_seconds = ${memory.compaction_min_interval_seconds}`,
      hint: force,
    };
  }
  const ratio = memory.buffer_high_water_ratio;
  return {
    cause: "under-trigger",
    reason: `the buffer (${count} events, ${buffer.totalBytes} bytes) is under its compaction trigger, buffer_high_water_ratio = ${ratio} of buffer_max_events = ${memory.buffer_max_events} or buffer_max_bytes = ${memory.buffer_max_bytes}`,
    hint: force,
  };
}

/** engram_id -> number of times `worker recall` returned it, from recall events. */
export function tallyRecalls(
  events: Iterable<MemoryEvent>,
  into = new Map<string, number>(),
): Map<string, number> {
  for (const event of events) {
    if (event.kind !== "recall" || !event.hits) continue;
    for (const id of event.hits) into.set(id, (into.get(id) ?? 0) + 1);
  }
  return into;
}
