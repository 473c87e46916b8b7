import { z } from "zod";
import { IsoTime, Link, Privacy, Sealed } from "./common.js";
import { MessageType, Outcome, Sender, SessionEndPayload } from "./envelope.js";

/**
 * The normalized, redacted record kept in the Director's buffer. Built from one envelope by
 * `normalizeEnvelope`; time is the Director's receipt time, never the worker's clock.
 */
export const MemoryEvent = z
  .object({
    /**
     * Deduplication key: `ih:<sha256 of the event_id>` or `h:<sha256 of the canonical
     * envelope>`; journals written before event ids were hashed hold `id:<event_id>`, read as
     * `ih:` when the buffer opens.
     */
    key: z.string().min(1),
    /** Position in the buffer, assigned by the Director, strictly increasing. */
    seq: z.number().int().positive(),
    received_at: IsoTime,
    type: MessageType,
    sender: Sender,
    /** The writer's own clock: kept for display, never used for ordering. */
    sent_at: IsoTime,
    /** Note kind, or what the message is: heartbeat, progress, error, hello, recall, control... */
    kind: z.string().min(1).max(64),
    text: z.string().optional(),
    rationale: z.string().optional(),
    topics: z.array(z.string()),
    links: z.array(Link),
    issue: z.string().optional(),
    stage: z.string().optional(),
    status: z.string().optional(),
    confidence: z.number().min(0).max(1).optional(),
    outcome: Outcome.optional(),
    privacy: Privacy,
    error_type: z.string().optional(),
    /** A worker error's stable id (upstream `error.error_id`): one error however often reported. */
    error_id: z.string().optional(),
    retryable: z.boolean().optional(),
    progress: z.number().optional(),
    duration_ms: z.number().optional(),
    attempt: z.number().optional(),
    hits: z.array(z.string()).optional(),
    main_ancestor_sha: z.string().optional(),
    catalog_hash_seen: z.string().optional(),
    /** Text of `sensitive` events, encrypted; `text` and `rationale` are then absent. */
    sealed: z.array(Sealed).optional(),
    /** The texts of the memory items this note replaces (a note's `supersedes`, redacted). */
    supersedes: z.array(z.string()).optional(),
    /** How many secrets were redacted from this event. */
    redactions: z.number().int().nonnegative(),
    /**
     * `session_end.v1`: one part of an ended session's buffer, redacted. The Director
     * consolidates it into memory (never compacts it into an engram).
     */
    session: SessionEndPayload.optional(),
  })
  .strict();
export type MemoryEvent = z.infer<typeof MemoryEvent>;
