import { z } from "zod";
import { IsoTime, Link, Privacy, SafeId, Sealed } from "./common.js";
import { ENVELOPE_SCHEMA_VERSION, MESSAGE_TYPES } from "./message-types.js";
import { NOTE_KINDS, OUTCOMES } from "./note-kinds.js";

export { ENVELOPE_SCHEMA_VERSION, MESSAGE_TYPES };

export const MessageType = z.enum(MESSAGE_TYPES);
export type MessageType = z.infer<typeof MessageType>;

export const Sender = z.looseObject({
  role: z.enum(["director", "worker", "operator"]),
  id: SafeId,
  run_id: z.string().min(1).max(128).optional(),
});
export type Sender = z.infer<typeof Sender>;

/** The agent-bus envelope. Unknown fields are tolerated (additive extension), wrong ones are not. */
export const Envelope = z.looseObject({
  schema_version: z.literal(ENVELOPE_SCHEMA_VERSION),
  message_type: MessageType,
  sent_at: IsoTime,
  sender: Sender,
  seq: z.number().int().nonnegative(),
  // Any object: its own schema (by message type) checks it next. A refinement, not a record or
  // an object schema, so it is not walked or copied twice.
  payload: z
    .unknown()
    .refine(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      "expected an object",
    )
    .meta({ type: "object" }) as unknown as z.ZodType<Record<string, unknown>>,
  /** Ours, additive: set by the writer, unchanged on resend; the deduplication key. */
  event_id: z.string().min(1).max(200).optional(),
});
export type Envelope = z.infer<typeof Envelope>;

const Text = z.string().min(1).max(8000);
const ShortText = z.string().min(1).max(512);
const Topic = z.string().min(1).max(64);
const Fraction = z.number().min(0).max(1);
const IssueRef = z.union([z.string().min(1).max(128), z.number().int().nonnegative()]);
/** A link is either `{type, ref}` or a bare string classified on ingest (`#12`, `src/a.ts`, a URL, a sha). */
const LinkInput = z.union([z.string().min(1).max(512), Link]);
const GitSha = z.string().regex(/^[0-9a-f]{7,64}$/, "expected a hex commit sha");

export { NOTE_KINDS, OUTCOMES };
export const NoteKind = z.enum(NOTE_KINDS);
export type NoteKind = z.infer<typeof NoteKind>;

export const Outcome = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof Outcome>;

/**
 * Ours, additive: what a worker wants remembered. A `sensitive` note may arrive already
 * sealed by the worker (`sealed` instead of `text`), so its clear text is never spooled.
 */
export const MemoryNotePayload = z
  .looseObject({
    kind: NoteKind,
    text: Text.optional(),
    sealed: z.array(Sealed).min(1).max(4).optional(),
    rationale: Text.optional(),
    topics: z.array(Topic).max(32).default([]),
    links: z.array(LinkInput).max(32).default([]),
    confidence: Fraction.optional(),
    outcome: Outcome.optional(),
    privacy: Privacy.default("private"),
    issue: IssueRef.optional(),
    /**
     * What this note replaces in memory: each item's note id (as `worker recall --json` shows
     * it) and its text as memory held it, resolved by the worker when it sent the note.
     */
    supersedes: z
      .array(z.object({ id: z.string().min(1).max(128), text: Text }).strict())
      .max(8)
      .optional(),
  })
  .refine((p) => p.text !== undefined || (p.sealed !== undefined && p.privacy === "sensitive"), {
    message: "text is required (or sealed, for a sensitive note)",
    path: ["text"],
  });

const DriftFields = {
  main_ancestor_sha: GitSha.optional(),
  catalog_hash_seen: z.string().max(80).optional(),
};

/*
 * Telemetry (hello, heartbeat, progress, errors) is read, never refused, for what it leaves
 * out or adds: every field is optional and unknown ones pass. Only a field we read that has
 * the wrong type (or is out of its bounds) makes the payload invalid. Both the upstream
 * specification's nested shapes (`state`, `worker`, `repo`, `error`) and our flat fields,
 * kept as additive aliases, are read.
 */
const Int = z.number().int().nonnegative();
/** Upstream's `{step, percent}` progress (percent 0..100). */
const StepProgress = z.looseObject({
  step: z.string().max(512).optional(),
  percent: z.number().min(0).max(100).optional(),
});

/** Upstream's `repo` block of a hello or a heartbeat's state. */
const RepoView = z.looseObject({
  branch_name: z.string().max(512).optional(),
  base_branch: z.string().max(512).optional(),
  main_sha_seen: GitSha.optional(),
  ...DriftFields,
});

export const HelloPayload = z.looseObject({
  protocol_version: z.string().max(64).optional(),
  capabilities: z.array(z.string().max(64)).max(64).optional(),
  worker: z
    .looseObject({
      worker_id: z.string().max(200).optional(),
      container_id: z.string().max(512).optional(),
      image_tag: z.string().max(512).optional(),
      worktree_path: z.string().max(4096).optional(),
      branch_name: z.string().max(512).optional(),
    })
    .optional(),
  repo: RepoView.optional(),
  ...DriftFields,
});

/** Upstream's WorkerState, the `state` of a heartbeat. */
export const WorkerStatePayload = z.looseObject({
  stage: ShortText.optional(),
  issue_number: Int.optional(),
  attempt: Int.optional(),
  progress: StepProgress.optional(),
  repo: RepoView.optional(),
  last_error_id: z.string().max(200).optional(),
  last_update_at: z.string().max(64).optional(),
});

export const HeartbeatPayload = z.looseObject({
  state: WorkerStatePayload.optional(),
  stage: ShortText.optional(),
  issue: IssueRef.optional(),
  issue_number: Int.optional(),
  attempt: Int.optional(),
  progress: z.union([Fraction, StepProgress]).optional(),
  ...DriftFields,
});

export const TaskProgressPayload = z.looseObject({
  stage: ShortText.optional(),
  step: z.string().max(512).optional(),
  percent: z.number().min(0).max(100).optional(),
  issue: IssueRef.optional(),
  issue_number: Int.optional(),
  status: z.string().max(64).optional(),
  progress: z.union([Fraction, StepProgress]).optional(),
  message: Text.optional(),
  duration_ms: z.number().nonnegative().optional(),
});

/** Upstream's `error` object of `worker_error.v1`. */
export const WorkerErrorDetail = z.looseObject({
  error_id: z.string().min(1).max(200).optional(),
  worker_id: z.string().max(200).optional(),
  issue_number: Int.optional(),
  stage: ShortText.optional(),
  attempt: Int.optional(),
  error_type: ShortText.optional(),
  is_transient: z.boolean().optional(),
  should_retry: z.boolean().optional(),
  escalate_to_human: z.boolean().optional(),
  message: Text.optional(),
  exit_code: z.number().int().optional(),
});

export const WorkerErrorPayload = z.looseObject({
  error: WorkerErrorDetail.optional(),
  error_type: ShortText.optional(),
  message: Text.optional(),
  retryable: z.boolean().optional(),
  issue: IssueRef.optional(),
  stage: ShortText.optional(),
  attempt: Int.optional(),
});

export const MemoryEventPayload = z.looseObject({
  kind: ShortText,
  text: Text.optional(),
  topics: z.array(Topic).max(32).optional(),
  links: z.array(LinkInput).max(32).optional(),
  issue: IssueRef.optional(),
  privacy: Privacy.optional(),
  /** `kind: "recall"`: the query and the engram ids it returned, a promotion signal. */
  query: z.string().max(1000).optional(),
  hits: z.array(SafeId).max(100).optional(),
});

export const SyncRequiredPayload = z.looseObject({
  reason: z.enum(["behind_main", "catalog_mismatch", "protocol_change"]),
  main_sha_expected: GitSha.optional(),
  catalog_hash_expected: z.string().max(80).optional(),
  policy: z.record(z.string(), z.unknown()).optional(),
  required_action: z.enum(["merge_main", "rebase_main"]),
});

/**
 * Ours, additive: the TCP hub's acknowledgement. Messages `from_seq` to `through_seq` of this
 * connection (numbered from 1 after the hello) are durable at the Director: in its journal,
 * a duplicate of an event already there, or quarantined with the reason.
 */
export const BusAckPayload = z.looseObject({
  from_seq: z.number().int().positive(),
  through_seq: z.number().int().positive(),
});

/** Ours, additive: one item of a session buffer, as `worker session end` sends it. */
export const SessionEndItem = z
  .object({
    seq: z.number().int().positive(),
    kind: z.enum(["episode", "fact", "lesson", "convention", "decision", "state", "core"]),
    written_at: z.string().max(64),
    text: Text.optional(),
    rationale: Text.optional(),
    sealed: z.array(Sealed).min(1).max(4).optional(),
    privacy: Privacy.optional(),
    confidence: Fraction.optional(),
    outcome: Outcome.optional(),
    key: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/)
      .optional(),
    value: z.unknown().optional(),
    redactions: z.number().int().nonnegative(),
  })
  .strict();
export type SessionEndItem = z.infer<typeof SessionEndItem>;

/**
 * Ours, additive: a session's buffer, ended. One delivery of `parts` envelopes (the buffer cut
 * to fit `agent_bus.max_message_bytes`); the Director consolidates a session once it holds
 * every part, and only once whatever the number of deliveries.
 */
export const SessionEndPayload = z
  .looseObject({
    session_id: z.string().regex(/^s_[0-9a-f]{16}$/, "expected an id like s_0123456789abcdef"),
    name: z.string().max(512).nullable().optional(),
    parent_version: z.number().int().nonnegative(),
    parent_catalog_hash: z.string().max(80),
    parent_commit: GitSha.nullable().optional(),
    ended_at: z.string().max(64),
    part: z.number().int().positive(),
    parts: z.number().int().positive(),
    /** Items in the whole session, across its parts. */
    item_count: z.number().int().nonnegative(),
    items: z.array(SessionEndItem).max(100_000),
  })
  .refine((p) => p.part <= p.parts, { message: "part is past parts", path: ["part"] });
export type SessionEndPayload = z.infer<typeof SessionEndPayload>;

const Loose = z.looseObject({});

export const PAYLOAD_SCHEMAS: Record<MessageType, z.ZodType<Record<string, unknown>>> = {
  "protocol_hello.v1": HelloPayload,
  "protocol_welcome.v1": Loose,
  "heartbeat.v1": HeartbeatPayload,
  "task_progress.v1": TaskProgressPayload,
  "worker_error.v1": WorkerErrorPayload,
  "project_state_snapshot.v1": Loose,
  "memory_event.v1": MemoryEventPayload,
  "engram_announce.v1": Loose,
  "engram_catalog_snapshot.v1": Loose,
  "engram_catalog_delta.v1": Loose,
  "sync_required.v1": SyncRequiredPayload,
  "protocol_incompatibility.v1": Loose,
  "memory_note.v1": MemoryNotePayload,
  "bus_ack.v1": BusAckPayload,
  "session_end.v1": SessionEndPayload,
};

/**
 * The zod schemas ingest needs for an envelope its quick check is not sure of, as one value:
 * ingest loads this module only then, so a clean stream never pays for zod.
 */
export const ENVELOPE_SCHEMAS = { Envelope, PAYLOAD_SCHEMAS };
export type EnvelopeSchemas = typeof ENVELOPE_SCHEMAS;
