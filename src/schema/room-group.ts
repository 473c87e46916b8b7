/**
 * A group's record as a compaction for room leaves it in the state folder (one line of a
 * pending file, see src/core/compaction/group.ts), checked as the input it is: a state
 * folder can be restored from anywhere, so every field has the shape the packing relies on.
 */
import { z } from "zod";
import { IsoTime, Link, Privacy, SafeId, Sealed, UtcTime } from "./common.js";
import {
  BatchId,
  Decision,
  Episode,
  ItemProvenance,
  LearningId,
  LearningOrigin,
} from "./engram.js";

const Count = z.number().int().nonnegative();
const Millis = z.number().nonnegative();
const Pairs = z.array(z.tuple([z.string(), Count]));

const WorkerTrack = z
  .object({
    worker: SafeId,
    heartbeats: Count,
    progress_events: Count,
    stages: z.array(z.string()).max(16),
    first_ts: UtcTime,
    last_ts: UtcTime,
    first_sent_at: IsoTime,
    last_sent_at: IsoTime,
    longest_gap_ms: Millis,
    span_ms: Millis,
    reported_ms: Millis,
  })
  .strict();

const ErrorTrack = z
  .object({
    error_type: z.string(),
    count: z.number().int().positive(),
    retryable: z.array(z.boolean().nullable()).max(3),
    sample: z.string().optional(),
    workers: z.array(z.string()).max(32),
    ids: z.array(z.string()),
  })
  .strict();

export const GroupRecord = z
  .object({
    label: z.string().min(1).max(600),
    events: z.number().int().positive(),
    facts: z.array(
      z.object({ text: z.string().min(1), tentative: z.literal(true).optional() }).strict(),
    ),
    decisions: z.array(Decision),
    origins: z.array(z.tuple([LearningId, LearningOrigin])),
    said_by: z
      .array(z.tuple([LearningId, ItemProvenance]))
      .max(100_000)
      .optional(),
    evidence: z.array(z.tuple([LearningId, z.number().int().positive()])),
    topic_counts: Pairs,
    message_types: Pairs,
    links: z.array(Link).max(64),
    sealed: z.array(Sealed),
    // MAX_GROUP_EPISODES (src/core/compaction/episodes.ts): 32 an engram part.
    episodes: z.array(Episode).max(1024),
    senders: z.array(z.string()).max(64),
    all_senders: z.array(z.string()).max(64),
    privacy: Privacy,
    all_sensitive: z.boolean(),
    notes: Count,
    decisions_noted: Count,
    lessons: Count,
    incidents: Count,
    redactions: Count,
    max_surprise: z.number().min(0).max(1).nullable(),
    confidence_millionths: Count,
    confidence_count: Count,
    start: UtcTime,
    end: UtcTime,
    telemetry: z.object({ workers: z.array(WorkerTrack), errors: z.array(ErrorTrack) }).strict(),
  })
  .strict();

/** One line of a pending file that holds a group's record: the batch its slice went to. */
export const PendingGroupLine = z
  .object({
    version: BatchId,
    group: GroupRecord,
    // What the group's notes named in `supersedes`, by the item that replaces (replaces.ts).
    supersedes: z.array(z.tuple([z.string().min(1), z.array(z.string().min(1))])).optional(),
  })
  .strict();
export type PendingGroupLine = z.infer<typeof PendingGroupLine>;
