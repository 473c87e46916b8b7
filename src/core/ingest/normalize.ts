import type { z } from "zod";
import type { Link, Privacy, Sealed } from "../../schema/common.js";
import type { Envelope, EnvelopeSchemas } from "../../schema/envelope.js";
import { envelopeSurelyValid } from "../../schema/envelope-fast.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { linkRefProblem, normalizeTopic, oneLine } from "../model/fields.js";
import { classifyLink, isLinkInput, normalizeIssue } from "../model/links.js";
import { cutText, wellFormed } from "../model/text.js";
import { dedupKey, redactSenderId } from "./event-keys.js";
import type { Redactor } from "./redact.js";
import { sealText } from "./seal.js";
import { normalizeSessionPart } from "./session-end.js";
import { telemetryFields } from "./telemetry-fields.js";

/** A MemoryEvent before the buffer gives it its sequence number. */
export type PendingEvent = Omit<MemoryEvent, "seq">;

export type QuarantineReason =
  | "oversized"
  | "malformed-json"
  | "invalid-envelope"
  | "invalid-payload";

export type NormalizeResult =
  /** `repaired`: lone surrogates replaced by U+FFFD in the event's text. */
  | { ok: true; event: PendingEvent; repaired: number }
  /** `needs-schemas`: the quick check was not sure and no `schemas` were given: load them, ask again. */
  | { ok: false; reason: QuarantineReason | "needs-schemas"; detail: string; redactions: number };

export interface NormalizeContext {
  /** Director receipt time, ISO-8601 UTC. */
  receivedAt: string;
  maxMessageBytes: number;
  redactor: Redactor;
  /** 32-byte key for `sensitive` text; without it sensitive text is dropped, never stored in clear. */
  sealKey: Uint8Array | undefined;
  /**
   * The zod schemas, for an envelope the quick check is not sure of (they decide, and word
   * the quarantine detail). Loading them costs a start-up: the caller passes them once needed.
   */
  schemas: EnvelopeSchemas | undefined;
  /** Every envelope through the zod schemas (the reference the fast check is tested against). */
  zodOnly?: boolean;
}

// The keys and excerpts live apart, without the zod schemas, for the commands that only
// need them (a worker's start-up); they stay exported from here for everyone else.
export {
  currentKey,
  decodeJsonEscapes,
  dedupKey,
  eventIdKey,
  quarantineExcerpt,
  redactSenderId,
  strictestPrivacy,
} from "./event-keys.js";

function describeIssues(error: z.ZodError, prefix: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".");
      return `${path || "(root)"}: ${issue.message}`;
    })
    .join("; ");
}

/**
 * Validates one NDJSON line and turns it into a redacted MemoryEvent. Never throws on bad
 * input: the caller quarantines what comes back `ok: false` (its `detail` is redacted too).
 */
export function normalizeLine(line: string, ctx: NormalizeContext): NormalizeResult {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most lines need no byte count at all.
  const bytes = line.length * 3 <= ctx.maxMessageBytes ? 0 : Buffer.byteLength(line, "utf8");
  if (bytes > ctx.maxMessageBytes) {
    return {
      ok: false,
      reason: "oversized",
      detail: `message is ${bytes} bytes, over the limit agent_bus.max_message_bytes = ${ctx.maxMessageBytes}`,
      redactions: 0,
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (error) {
    // V8 quotes the start of the input in its message; a secret could hide there, cut.
    const message = (error as Error).message.replace(/"(?:[^"\\]|\\.)*"(?:\.\.\.)?/g, "…");
    return {
      ok: false,
      reason: "malformed-json",
      detail: `not valid JSON: ${message}`,
      redactions: 0,
    };
  }
  return normalizeEnvelope(raw, ctx);
}

export function normalizeEnvelope(raw: unknown, ctx: NormalizeContext): NormalizeResult {
  // The common envelopes are checked by hand (zod's object walk was most of ingest's cost);
  // anything it is not sure of goes to zod, which decides and words the quarantine detail.
  if (ctx.zodOnly !== true && envelopeSurelyValid(raw)) {
    return normalizeValid(raw as unknown as Envelope, raw.payload, raw, ctx);
  }
  if (ctx.schemas === undefined) return NEEDS_SCHEMAS;
  const { Envelope, PAYLOAD_SCHEMAS } = ctx.schemas;
  const envelope = Envelope.safeParse(raw);
  if (!envelope.success) {
    const redacted = ctx.redactor.redact(describeIssues(envelope.error, ""));
    return {
      ok: false,
      reason: "invalid-envelope",
      detail: redacted.text,
      redactions: redacted.count,
    };
  }
  const env = envelope.data;
  const payloadResult = PAYLOAD_SCHEMAS[env.message_type].safeParse(env.payload);
  if (!payloadResult.success) {
    const redacted = ctx.redactor.redact(describeIssues(payloadResult.error, "payload"));
    return {
      ok: false,
      reason: "invalid-payload",
      detail: redacted.text,
      redactions: redacted.count,
    };
  }
  return normalizeValid(env, payloadResult.data as Record<string, unknown>, raw, ctx);
}

/** A valid envelope and payload (zod's output, or the raw ones the fast check passed). */
function normalizeValid(
  env: Envelope,
  p: Record<string, unknown>,
  raw: unknown,
  ctx: NormalizeContext,
): NormalizeResult {
  const key = dedupKey(raw as Record<string, unknown>);
  let redactions = 0;
  let repaired = 0;
  // Text already well formed: redacted only.
  const redactOnly = (text: string): string => {
    const result = ctx.redactor.redact(text);
    redactions += result.count;
    return result.text;
  };
  const clean = (text: string): string => {
    const valid = wellFormed(text);
    repaired += valid.replaced;
    return redactOnly(valid.text);
  };
  const str = (value: unknown): string | undefined =>
    typeof value === "string" ? clean(value) : undefined;

  const topics: string[] = [];
  if (Array.isArray(p.topics)) {
    for (const raw of p.topics as unknown[]) {
      // A payload whose schema has no topics passes them unchecked: only strings are read.
      if (typeof raw !== "string") continue;
      // Redacted before it is lower-cased (a lower-cased token no longer looks like one) and
      // after (one sent in capitals may look like one only once lower-cased, and a compaction
      // redacting it again must find nothing). One line of at most 64 units, whatever the
      // writer sent: a topic is a keyword.
      const redacted = clean(raw);
      const lowered = lowerKeepingMarkers(normalizeTopic(redacted));
      // Redacted text is a fixed point of the redactor: only one cut or lower-cased is read again.
      const topic = lowered === redacted ? lowered : redactOnly(lowered);
      if (topic.length > 0 && !topics.includes(topic)) topics.push(topic);
    }
  }
  const links: Link[] = [];
  if (Array.isArray(p.links)) {
    for (const [i, raw] of (p.links as unknown[]).entries()) {
      if (!isLinkInput(raw)) continue;
      const link = classifyLink(raw);
      // An empty link names nothing: leaving it out loses nothing.
      if (link.ref === "") continue;
      const ref = clean(link.ref);
      // Checked once redacted (a marker may lengthen it). A link that is not one line names
      // no file or issue and would poison every file built from it: the line is quarantined
      // with its reason, as the worker's own check refuses it at emit time.
      const problem = linkRefProblem(ref);
      if (problem !== undefined) {
        return {
          ok: false,
          reason: "invalid-payload",
          detail: `payload.links.${i}: ${problem}`,
          redactions,
        };
      }
      links.push({ type: link.type, ref });
    }
  }
  const privacy: Privacy = (p.privacy as Privacy | undefined) ?? "private";
  const sender = env.sender;
  const senderId = redactSenderId(sender.id, ctx.redactor);
  redactions += senderId.count;
  // Telemetry in the upstream nested shapes or our flat aliases, read into one set of fields.
  const t = telemetryFields(env.message_type, p);
  const issue = normalizeIssue(t.issue === undefined ? undefined : oneLineOf(t.issue));
  // The free text of the message: a note's text, an error's message, a progress message.
  const text = str(p.text) ?? str(t.message) ?? str(p.query);
  const rationale = str(p.rationale);
  let sealed: Sealed[] | undefined;
  if (privacy === "sensitive") {
    sealed = Array.isArray(p.sealed) ? [...(p.sealed as Sealed[])] : [];
    if (ctx.sealKey !== undefined) {
      if (text !== undefined) sealed.push(sealText(ctx.sealKey, "text", text));
      if (rationale !== undefined) sealed.push(sealText(ctx.sealKey, "rationale", rationale));
    }
    if (sealed.length === 0) sealed = undefined;
  }
  let session: PendingEvent["session"];
  if (env.message_type === "session_end.v1") {
    const part = normalizeSessionPart(
      p as unknown as NonNullable<PendingEvent["session"]>,
      clean,
      ctx.redactor,
      ctx.sealKey,
    );
    session = part.session;
    redactions += part.redactions;
  }
  // Every value first (each `clean` counts its redactions), then the event with only the
  // fields present, always in this order: the journal line is its JSON, and JSON.stringify
  // walks every own property, so a field left out costs nothing there.
  const kind = kindOf(env.message_type, p, clean);
  const cleanIssue = issue === undefined ? undefined : clean(issue);
  // Labels, one line each (they are grouped and listed, never read as prose).
  const label = (value: unknown) => (typeof value === "string" ? oneLine(clean(value)) : undefined);
  const stage = label(t.stage);
  const status = label(t.status);
  const errorType = label(t.error_type);
  const errorId = label(t.error_id);
  const catalogHashSeen = str(t.catalog_hash_seen);
  const runId = sender.run_id === undefined ? undefined : clean(sender.run_id);
  const e: Record<string, unknown> = {
    key,
    received_at: ctx.receivedAt,
    type: env.message_type,
    sender:
      runId === undefined
        ? { role: sender.role, id: senderId.text }
        : { role: sender.role, id: senderId.text, run_id: runId },
    // Already canonical UTC in the common case: skip the Date round trip.
    sent_at: CANONICAL_UTC.test(env.sent_at) ? env.sent_at : new Date(env.sent_at).toISOString(),
    kind,
  };
  // Text stays out of a sensitive event (it is sealed above).
  if (privacy !== "sensitive") {
    if (text !== undefined) e.text = text;
    if (rationale !== undefined) e.rationale = rationale;
  }
  e.topics = topics;
  e.links = links;
  if (cleanIssue !== undefined) e.issue = cleanIssue;
  if (stage !== undefined) e.stage = stage;
  if (status !== undefined) e.status = status;
  if (typeof p.confidence === "number") e.confidence = p.confidence;
  if (typeof p.outcome === "string") e.outcome = p.outcome;
  e.privacy = privacy;
  if (errorType !== undefined) e.error_type = errorType;
  if (errorId !== undefined) e.error_id = errorId;
  if (t.retryable !== undefined) e.retryable = t.retryable;
  if (t.progress !== undefined) e.progress = t.progress;
  if (typeof p.duration_ms === "number") e.duration_ms = p.duration_ms;
  if (t.attempt !== undefined) e.attempt = t.attempt;
  if (Array.isArray(p.hits)) e.hits = [...(p.hits as string[])];
  if (Array.isArray(p.supersedes) && privacy !== "sensitive") {
    const was = (p.supersedes as { text?: unknown }[]).flatMap((s) => str(s.text) ?? []);
    if (was.length > 0) e.supersedes = was;
  }
  // Validated hex: nothing to redact.
  if (t.main_ancestor_sha !== undefined) e.main_ancestor_sha = t.main_ancestor_sha;
  if (catalogHashSeen !== undefined) e.catalog_hash_seen = catalogHashSeen;
  if (sealed !== undefined) e.sealed = sealed;
  e.redactions = redactions;
  if (session !== undefined) e.session = session;
  const event = e as unknown as PendingEvent;
  return { ok: true, event, repaired };
}

function oneLineOf(issue: string | number): string | number {
  return typeof issue === "string" ? oneLine(issue) : issue;
}

function lowerKeepingMarkers(text: string): string {
  const lower = text.toLowerCase();
  return lower.includes("[redacted:") ? lower.replace(/\[redacted:/g, "[REDACTED:") : lower;
}

const NEEDS_SCHEMAS: NormalizeResult = {
  ok: false,
  reason: "needs-schemas",
  detail: "the zod schemas are needed for this envelope",
  redactions: 0,
};

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function kindOf(
  type: string,
  payload: Record<string, unknown>,
  clean: (text: string) => string,
): string {
  switch (type) {
    case "memory_note.v1":
      return payload.kind as string;
    case "memory_event.v1":
      // Free text from the writer: redacted like any other, one line, cut on a grapheme
      // boundary; a kind that is nothing but spaces and controls is a plain "event".
      return cutText(oneLine(clean(String(payload.kind))), 64).trimEnd() || "event";
    case "heartbeat.v1":
      return "heartbeat";
    case "task_progress.v1":
      return "progress";
    case "worker_error.v1":
      return "error";
    case "protocol_hello.v1":
      return "hello";
    case "project_state_snapshot.v1":
      return "snapshot";
    case "session_end.v1":
      return "session_end";
    default:
      return "control";
  }
}
