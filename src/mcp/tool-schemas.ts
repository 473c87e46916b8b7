import { z } from "zod";
import { CONFIRMED_BY } from "../core/graph/freshness.js";
import { LEARNING_TYPE_NAMES } from "../core/graph/learnings.js";
import { RECALL_NOTE_KINDS, RECALL_SCOPES } from "../core/recall/notes.js";
import { MemoryNotePayload } from "../schema/envelope.js";
import { remoteRecallOutput } from "./sync-tools.js";

/*
 * The tools' schemas. Each input schema is both what `tools/list` publishes and what
 * `tools/call` enforces (src/mcp/protocol.ts): a call the schema accepts is never refused
 * later by the handler for its shape, and every refusal names the field.
 */

/** `MemoryScope` (src/graph/scope.ts): one shape for every read. */
const scopeSchema = z.object({
  repository: z.string(),
  memory_version: z.number().int(),
  catalog_hash: z.string(),
  tiers: z.array(z.enum(["st", "lt"])),
  engrams_in_scope: z.number().int().optional(),
  history_in_scope: z.boolean().optional(),
  learnings_in_scope: z.number().int().optional(),
  activity_sources: z
    .object({
      git: z.literal(true),
      github: z.object({ asked: z.boolean(), reason: z.string() }),
    })
    .optional(),
  remote_store: z.object({ asked: z.boolean(), reason: z.string() }),
});

export const recallOutput = z.object({
  status: z.enum(["found", "no_match", "memory_empty"]),
  message: z.string(),
  scope: scopeSchema,
  hits: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(RECALL_NOTE_KINDS),
      text: z.string(),
      rationale: z.string().optional(),
      truncated: z.literal(true).optional(),
      scope: z.enum(RECALL_SCOPES),
      engram_id: z.string().optional(),
      path: z.string().optional(),
      commit: z.string().optional(),
      at: z.string(),
      senders: z.array(z.string()),
      topics: z.array(z.string()),
      score: z.number(),
      matched: z.array(z.string()),
      tokens: z.number().int(),
      superseded_by: z.array(z.string()).optional(),
      source: z.literal("local"),
    }),
  ),
  tokens: z.number().int(),
  max_tokens: z.number().int(),
  signal: z.boolean(),
  ...remoteRecallOutput,
});

export const LEARNING_TYPES = [
  "decision",
  "insight",
  "pattern",
  "convention",
  "self_knowledge",
] as const;

export const contextOutput = z.object({
  status: z.enum(["found", "no_match", "memory_empty"]),
  message: z.string(),
  scope: scopeSchema,
  topic: z.string(),
  max_tokens: z.number().int(),
  tokens: z.number().int(),
  tokenizer: z.string(),
  items: z.array(
    z.object({
      id: z.string(),
      type: z.enum(LEARNING_TYPES),
      text: z.string(),
      rationale: z.string().nullable(),
      score: z.number(),
      via: z.enum(["match", "neighbour"]),
      shared: z.array(z.string()),
      engram_id: z.string(),
      evidence: z.number().int(),
    }),
  ),
  omitted: z.number().int(),
  markdown: z.string(),
});

export const freshnessOutput = z.object({
  scope: scopeSchema,
  threshold_days: z.number(),
  now: z.string(),
  fresh: z.number().int(),
  stale: z.number().int(),
  temporal_stale: z.number().int(),
  learnings: z.array(
    z.object({
      id: z.string(),
      type: z.string(),
      text: z.string(),
      confirmed_at: z.string(),
      // Every way freshness finds it, seed.json imports ("origin") included.
      confirmed_by: z.enum(CONFIRMED_BY),
      graph_activity: z
        .object({ at: z.string(), entity: z.string(), detail: z.string() })
        .nullable(),
      contextual_at: z.string(),
      age_days: z.number(),
      fresh: z.boolean(),
      temporal_fresh: z.boolean(),
      why: z.string(),
    }),
  ),
});

export const emitOutput = z.object({
  message: z.string(),
  event_id: z.string(),
  spooled: z.boolean(),
  transport: z.string(),
  /** Why the note will not reach memory from where it was spooled, and what to do. */
  warning: z.string().optional(),
});

export const statusOutput = z.object({
  scope: scopeSchema,
  catalog: z.object({ version: z.number(), hash: z.string(), entries: z.number() }),
  tiers: z.object({
    st: z.object({ files: z.number(), bytes: z.number() }),
    lt: z.object({ files: z.number(), bytes: z.number() }),
  }),
  focus: z.object({ present: z.boolean(), bytes: z.number() }),
});

// Hostile input is refused by the schema before any work: no unbounded strings.
const QUERY_MAX = 2_000;

export const recallInput = z.strictObject({
  query: z.string().min(1).max(QUERY_MAX).describe("what to look for (1-2,000 characters)"),
  limit: z.number().int().min(1).max(100).optional().describe("most hits, 1-100 (default 10)"),
  max_tokens: z
    .number()
    .int()
    .min(16)
    .max(100_000)
    .optional()
    .describe("most tokens of note text in all hits together, filled in rank order (default 512)"),
  history: z
    .boolean()
    .optional()
    .describe("also search the repository's commit history (default true)"),
  tiers: z
    .array(z.enum(["st", "lt"]))
    .min(1)
    .max(2)
    .optional()
    .describe("tiers to search: st (short-term), lt (long-term); default both"),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      "how sure the caller already is (0..1): below 0.5 the sync stores are asked at once, 0.5-0.7 only when local memory finds nothing, 0.7+ validated in the background for the next recall; absent: local memory only",
    ),
  refresh: z
    .boolean()
    .optional()
    .describe("with confidence: ignore cached store answers (default false)"),
  include_superseded: z
    .boolean()
    .optional()
    .describe(
      "also the short-term copies of notes a long-term engram carried forward (default false)",
    ),
});

export const contextInput = z.strictObject({
  topic: z
    .string()
    .min(1)
    .max(QUERY_MAX)
    .describe("the topic: words, a file, a project or a person"),
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("token budget of the answer's markdown (default 2000)"),
  type: z
    .enum(LEARNING_TYPE_NAMES)
    .optional()
    .describe("only learnings of this type (lesson: the insights lessons become)"),
});

export const freshnessInput = z.strictObject({
  threshold_days: z
    .number()
    .min(0.001)
    .max(36_500)
    .optional()
    .describe("a learning older than this, in days, is stale (default 30)"),
  stale_only: z.boolean().optional().describe("list only stale learnings (default true)"),
});

export const statusInput = z.strictObject({});

/*
 * memory_emit takes the memory_note.v1 payload's own field schemas (src/schema/envelope.ts):
 * the limits a call is refused by are the ones the note is checked against on its way to the
 * spool and again by the Director (text 8,000 characters, topics of 64, links of 512, at most
 * 32 of each; no empty rationale or issue). Links and issue are taken as strings only.
 */
const note = MemoryNotePayload.shape;
const linkText = note.links.unwrap().element.options[0];
const issueText = note.issue.unwrap().options[0];

export const emitInput = z.strictObject({
  kind: note.kind.describe(
    "what this note is: decision, fact, lesson, convention, incident or question",
  ),
  text: note.text
    .unwrap()
    .describe("the note itself, one self-contained statement (1-8,000 characters)"),
  rationale: note.rationale.describe(
    "why: the reason behind a decision or convention (1-8,000 characters; omit rather than send it empty)",
  ),
  topics: note.topics.describe("keywords to find it by (each 1-64 characters, at most 32)"),
  links: z
    .array(linkText)
    .max(32)
    .default([])
    .describe(
      "what it is about: #12 (issue), PR URLs, file paths, commit shas or URLs (each 1-512 characters, at most 32)",
    ),
  confidence: note.confidence.describe("how sure you are, 0..1"),
  outcome: note.outcome.describe(
    "for a lesson or incident: success, failure, partial or abandoned",
  ),
  privacy: note.privacy
    .unwrap()
    .optional()
    .describe(
      "private (default: never leaves the repository), public (may be synced to external stores) or sensitive (encrypted before it is written)",
    ),
  issue: issueText
    .optional()
    .describe("the issue this work is for, e.g. 42 or #42 (1-128 characters)"),
  supersedes: z
    .array(z.string().min(1).max(128))
    .max(8)
    .optional()
    .describe(
      "what this note replaces in memory: the ids memory_recall gives its hits (e_…#d0 for a decision, e_…#f2 for a fact), at most 8; readers then show only this note",
    ),
});
