import { z } from "zod";
import { Link, Privacy, SafeId, Sealed, Sha256Ref, UtcTime } from "./common.js";
import { Outcome } from "./envelope.js";
import { MAX_ENGRAM_ENTITIES } from "./formats.js";

export const Scope = z.enum(["st", "lt"]);
export type Scope = z.infer<typeof Scope>;

export const BatchId = z.string().regex(/^\d{8}-\d{6}Z$/, "expected a batch id YYYYMMDD-HHMMSSZ");
export const EngramId = z
  .string()
  .regex(/^e_[0-9a-f]{32}$/, "expected e_ followed by 32 hex digits");

export const Decision = z
  .object({
    title: z.string().min(1),
    rationale: z.string(),
    /** Additive: the confidence its note stated (absent when none was stated). */
    confidence: z.number().min(0).max(1).optional(),
  })
  .strict();
export type Decision = z.infer<typeof Decision>;

export const WorkerTelemetry = z
  .object({
    worker: SafeId,
    heartbeats: z.number().int().nonnegative(),
    progress_events: z.number().int().nonnegative(),
    stages: z.array(z.string()),
    first_ts: UtcTime,
    last_ts: UtcTime,
    active_seconds: z.number().nonnegative(),
    longest_gap_seconds: z.number().nonnegative(),
    stalled: z.boolean(),
  })
  .strict();

/**
 * Additive: a note that stated an outcome and a confidence, kept with its surprise score
 * (|confidence - outcome value|) so the sync policy can judge it. A sensitive note's text
 * stays sealed.
 */
export const Episode = z
  .object({
    /** Stable across re-runs: `ep_` and 24 hex digits of the event's deduplication key. */
    id: z.string().regex(/^ep_[0-9a-f]{24}$/, "expected ep_ followed by 24 hex digits"),
    at: UtcTime,
    kind: z.string(),
    sender: z.string(),
    outcome: Outcome,
    confidence: z.number().min(0).max(1),
    surprise: z.number().min(0).max(1),
    privacy: Privacy,
    text: z.string().optional(),
    sealed: z.array(Sealed).optional(),
  })
  .strict();
export type Episode = z.infer<typeof Episode>;

export const ErrorGroup = z
  .object({
    error_type: z.string(),
    count: z.number().int().positive(),
    retryable: z.boolean().nullable(),
    sample: z.string(),
    workers: z.array(z.string()),
  })
  .strict();

/** `kind:key`, e.g. `file:src/x.ts`, `person:ada`, `issue:12`. */
export const EntityRef = z
  .string()
  .regex(
    /^(?:person|project|component|file|issue|pr|commit):\S.{0,499}$/,
    "expected kind:key with kind person|project|component|file|issue|pr|commit",
  );

/** A learning's id: `l_` and 16 hex digits of its normalized text's digest. */
export const LearningId = z.string().regex(/^l_[0-9a-f]{16}$/, "expected l_ and 16 hex digits");

export const LearningOrigin = z
  .object({
    /** Where the learning was extracted, as its source names it (a session id...). */
    source: z.string().min(1).max(200),
    /** When it was confirmed there (ISO-8601 UTC); absent for a pending proposal. */
    confirmed_at: UtcTime.optional(),
  })
  .strict();
export type LearningOrigin = z.infer<typeof LearningOrigin>;

/**
 * One item's own provenance: the senders who said it, the links they gave with it; a field
 * left out is the engram's (`provenance.senders`, `links`). `confidence` and `outcome` are
 * what the item's note stated (a decision's confidence is `decisions[].confidence`, repeated
 * here only where it differs); left out when none was stated.
 */
export const ItemProvenance = z
  .object({
    senders: z.array(z.string()).max(64).optional(),
    links: z.array(Link).max(64).optional(),
    confidence: z.number().min(0).max(1).optional(),
    outcome: Outcome.optional(),
  })
  .strict();
export type ItemProvenance = z.infer<typeof ItemProvenance>;

/**
 * Readers ignore fields they do not know (the formats grow additively); the content hash
 * still covers them, so an added field is a detected edit.
 *
 * EngramDTO: one file `memory/<scope>/<version>/engram_<engram_id>.json`. The first block of
 * fields follows the MemorySync specification; the rest are our additive fields.
 */
const engramFields = {
  engram_id: EngramId,
  version: BatchId,
  scope: Scope,
  created_at: UtcTime,
  source_window: z.object({ start_ts: UtcTime, end_ts: UtcTime }).strict(),
  hash: Sha256Ref,
  topics: z.array(z.string()),
  facts: z.array(z.string()),
  decisions: z.array(Decision),
  links: z.array(Link),
  provenance: z.looseObject({
    created_by: z.string(),
    run_id: z.string(),
    event_count: z.number().int().nonnegative(),
    senders: z.array(z.string()),
    message_types: z.record(z.string(), z.number().int().nonnegative()),
  }),
  // additive fields
  privacy: Privacy,
  signals: z
    .object({
      notes: z.number().int().nonnegative(),
      decisions: z.number().int().nonnegative(),
      lessons: z.number().int().nonnegative(),
      incidents: z.number().int().nonnegative(),
      errors: z.number().int().nonnegative(),
      max_surprise: z.number().min(0).max(1).nullable(),
      mean_confidence: z.number().min(0).max(1).nullable(),
      redactions: z.number().int().nonnegative(),
      /** facts, decisions or links left out to respect `engram_max_bytes`. */
      truncated: z.number().int().nonnegative(),
    })
    .strict(),
  telemetry: z
    .object({ workers: z.array(WorkerTelemetry), errors: z.array(ErrorGroup) })
    .strict()
    .optional(),
  sealed: z.array(Sealed).optional(),
  /** Notes with an outcome and a confidence (sync episodes); absent when there are none. */
  episodes: z.array(Episode).optional(),
  /** Facts that are never promoted: questions, telemetry, notes below `promote_min_confidence`. */
  tentative: z.array(z.string()).optional(),
  /** LT only: the ST engrams whose content this one carries forward. */
  supersedes: z.array(EngramId).optional(),
  /**
   * Items of this engram that replace what memory said before: `now` is the item here (a
   * decision's title, or a fact as written, with its prefix), `was` the earlier item's text.
   * Readers show only `now`; `was` is hidden wherever an engram no newer than this one holds it.
   */
  replaces: z
    .array(z.object({ was: z.string().min(1), now: z.string().min(1) }).strict())
    .optional(),
  /**
   * Items of this engram that look like a secret and that a reviewer released from the hold
   * (`director release`, learning ids, sorted): the guard warns of them instead of failing.
   */
  released: z.array(LearningId).optional(),
  promotion: z
    .object({ reasons: z.array(z.string()) })
    .strict()
    .optional(),
  /**
   * The entities the engram is linked to (`kind:key`: person, project, component, file,
   * issue, pr, commit), sorted and unique; absent in engrams written before it existed.
   */
  entities: z.array(EntityRef).max(MAX_ENGRAM_ENTITIES).optional(),
  /**
   * Learnings already in memory that this engram's events stated again: learning id to how
   * many times. The claim is not restated; its evidence is raised here instead.
   */
  evidence: z.record(LearningId, z.number().int().positive()).optional(),
  /** Learnings imported from another memory (a pai-seed seed.json): where from, when confirmed. */
  origins: z.record(LearningId, LearningOrigin).optional(),
  /**
   * Who said each fact or decision, and what it linked, where that differs from the engram's
   * own `provenance.senders` and `links` (their union): learning id to its own. An item
   * without an entry, or a field an entry leaves out, has the engram's.
   */
  said_by: z.record(LearningId, ItemProvenance).optional(),
};
export const Engram = z.looseObject(engramFields);
/** The fields we know; a parsed engram may carry more, which our code leaves alone. */
export type Engram = z.infer<z.ZodObject<typeof engramFields>>;
export type EngramBody = Omit<Engram, "engram_id" | "hash">;

const catalogEntryFields = {
  engram_id: EngramId,
  scope: Scope,
  version: BatchId,
  path: z.string(),
  hash: Sha256Ref,
  topics: z.array(z.string()),
  // additive: the file's size, so budgets are checked without reading every engram
  bytes: z.number().int().positive(),
};
export const CatalogEntry = z.looseObject(catalogEntryFields);
export type CatalogEntry = z.infer<z.ZodObject<typeof catalogEntryFields>>;

/**
 * Ours, additive: a memory document that is not an engram (a state or core document, a
 * session's episodes, the accepted knowledge of a kind), hashed like an engram: the sha256
 * of the file's bytes.
 */
export const DocumentEntry = z
  .object({
    path: z.string(),
    kind: z.enum(["state", "core", "session", "knowledge"]),
    hash: Sha256Ref,
    bytes: z.number().int().positive(),
  })
  .strict();
export type DocumentEntry = z.infer<typeof DocumentEntry>;

/** EngramCatalogDTO: `memory/catalog.json`, the authoritative lookup table. */
const catalogFields = {
  catalog_version: z.number().int().nonnegative(),
  created_at: UtcTime,
  hash: Sha256Ref,
  entries: z.array(CatalogEntry),
  /** Ours, additive: the documents of consolidated sessions; absent when there are none. */
  documents: z.array(DocumentEntry).optional(),
};
export const Catalog = z.looseObject(catalogFields);
export type Catalog = Omit<z.infer<z.ZodObject<typeof catalogFields>>, "entries"> & {
  entries: CatalogEntry[];
};

export { SafeId };
