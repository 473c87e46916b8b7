import type { BatchRecord } from "../core/compaction/plan.js";
import { bufferMetaProblem, damaged, readStateText } from "./state-file-check.js";

/** The buffer's small meta file (`buffer/meta.json`): counters and times across compactions. */
export interface BufferMeta {
  /** Highest sequence number ever assigned (compacted or not). */
  last_seq: number;
  /** Receipt time of the last compaction, for the rate limit. */
  last_compaction_at?: string;
  /** Recall hits of events already compacted out of the buffer. */
  recall_counts: Record<string, number>;
  compacted_events: number;
  /** Newest receipt stamp seen: the cycle time when the buffer is empty. */
  last_received_at?: string;
  /** Recall events up to this sequence number have been weighed for promotion. */
  recall_checked_seq: number;
  /** Heartbeats up to this sequence number have been counted for MEMORY.md's cadence. */
  focus_heartbeat_seq?: number;
  /** The "Now" lines MEMORY.md was last rendered with (periodic cadence keeps them). */
  focus_now?: string[];
  /**
   * The batch the last compaction wrote into and the engrams it held then: a slice of the
   * same second takes them for earlier memory, not for its own.
   */
  compacted_batch?: BatchRecord;
}

export function emptyMeta(): BufferMeta {
  return { last_seq: 0, recall_counts: {}, compacted_events: 0, recall_checked_seq: 0 };
}

const META_ADVICE =
  "move it aside and run again: engram starts a new one from the journal (the recall counts and compaction times it held are lost, no event is)";

/**
 * The meta file, read and checked (each field present has the type its readers rely on: a
 * sequence number that is a string made the next journal line unreadable), over the
 * defaults. A `StateError` names the file and what to do.
 */
export function readBufferMeta(path: string): BufferMeta {
  const text = readStateText(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw damaged(path, "not valid JSON", META_ADVICE);
  }
  const problem = bufferMetaProblem(json);
  if (problem !== undefined) throw damaged(path, problem, META_ADVICE);
  return { ...emptyMeta(), ...(json as Partial<BufferMeta>) };
}
