import type { z } from "zod";
import type { Link, Privacy, Sealed } from "../schema/common.js";
import { Envelope, PAYLOAD_SCHEMAS } from "../schema/envelope.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { canonicalJson, sha256Hex } from "./canonical.js";
import { classifyLink, normalizeIssue } from "./links.js";
import type { RedactionResult, Redactor } from "./redact.js";
import { sealText } from "./seal.js";

/** A MemoryEvent before the buffer gives it its sequence number. */
export type PendingEvent = Omit<MemoryEvent, "seq">;

export type QuarantineReason =
  | "oversized"
  | "malformed-json"
  | "invalid-envelope"
  | "invalid-payload";

export type NormalizeResult =
  | { ok: true; event: PendingEvent }
  | { ok: false; reason: QuarantineReason; detail: string; redactions: number };

export interface NormalizeContext {
  /** Director receipt time, ISO-8601 UTC. */
  receivedAt: string;
  maxMessageBytes: number;
  redactor: Redactor;
  /** 32-byte key for `sensitive` text; without it sensitive text is dropped, never stored in clear. */
  sealKey: Uint8Array | undefined;
}

const PRIVACY_RANK: Record<Privacy, number> = { public: 0, private: 1, sensitive: 2 };

export function strictestPrivacy(a: Privacy, b: Privacy): Privacy {
  return PRIVACY_RANK[a] >= PRIVACY_RANK[b] ? a : b;
}

/**
 * The start of a rejected line, kept in the quarantine so a person can see what came in.
 * The whole line is redacted before it is cut, so a secret straddling the cut cannot leak
 * as an unrecognisable prefix.
 */
export function quarantineExcerpt(
  line: string,
  redactor: Redactor,
  maxChars = 300,
): RedactionResult {
  const redacted = redactor.redact(line);
  return { text: redacted.text.slice(0, maxChars), count: redacted.count };
}

/** The deduplication key: the writer's `event_id`, or else the digest of the whole envelope. */
export function dedupKey(envelope: Record<string, unknown>): string {
  const id = envelope.event_id;
  if (typeof id === "string" && id.length > 0) return `id:${id}`;
  return `h:${sha256Hex(canonicalJson(envelope))}`;
}

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
  const bytes = Buffer.byteLength(line, "utf8");
  if (bytes > ctx.maxMessageBytes) {
    return {
      ok: false,
      reason: "oversized",
      detail: `message is ${bytes} bytes, over agent_bus.max_message_bytes (${ctx.maxMessageBytes})`,
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
  const key = dedupKey(raw as Record<string, unknown>);
  const counter = { redactions: 0 };
  const clean = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    const result = ctx.redactor.redact(text);
    counter.redactions += result.count;
    return result.text;
  };
  const p = payloadResult.data as Record<string, unknown>;
  const str = (name: string): string | undefined =>
    typeof p[name] === "string" ? clean(p[name] as string) : undefined;
  const num = (name: string): number | undefined =>
    typeof p[name] === "number" ? (p[name] as number) : undefined;

  const topics = Array.isArray(p.topics)
    ? [
        ...new Set((p.topics as string[]).map((t) => clean(t.trim().toLowerCase()) as string)),
      ].filter((t) => t.length > 0)
    : [];
  const links: Link[] = Array.isArray(p.links)
    ? (p.links as (string | Link)[]).map((l) => {
        const link = classifyLink(l);
        return { type: link.type, ref: clean(link.ref) as string };
      })
    : [];
  const privacy: Privacy = (p.privacy as Privacy | undefined) ?? "private";

  const event: PendingEvent = {
    key,
    received_at: ctx.receivedAt,
    type: env.message_type,
    sender: {
      role: env.sender.role,
      id: env.sender.id,
      ...(env.sender.run_id !== undefined ? { run_id: clean(env.sender.run_id) as string } : {}),
    },
    sent_at: new Date(env.sent_at).toISOString(),
    kind: kindOf(env.message_type, p),
    topics,
    links,
    privacy,
    redactions: 0,
  };
  const issue = normalizeIssue(p.issue as string | number | undefined);
  if (issue !== undefined) event.issue = clean(issue) as string;
  const optionalStrings = {
    stage: str("stage"),
    status: str("status"),
    error_type: str("error_type"),
    main_ancestor_sha: str("main_ancestor_sha"),
    catalog_hash_seen: str("catalog_hash_seen"),
  };
  for (const [name, value] of Object.entries(optionalStrings)) {
    if (value !== undefined) (event as Record<string, unknown>)[name] = value;
  }
  const numbers = {
    confidence: num("confidence"),
    progress: num("progress"),
    duration_ms: num("duration_ms"),
    attempt: num("attempt"),
  };
  for (const [name, value] of Object.entries(numbers)) {
    if (value !== undefined) (event as Record<string, unknown>)[name] = value;
  }
  if (typeof p.retryable === "boolean") event.retryable = p.retryable;
  if (typeof p.outcome === "string") event.outcome = p.outcome as PendingEvent["outcome"];
  if (Array.isArray(p.hits)) event.hits = [...(p.hits as string[])];

  // The free text of the message: a note's text, an error's message, a progress message.
  const text = str("text") ?? str("message") ?? str("query");
  const rationale = str("rationale");
  if (privacy === "sensitive") {
    const sealed: Sealed[] = Array.isArray(p.sealed) ? [...(p.sealed as Sealed[])] : [];
    if (ctx.sealKey !== undefined) {
      if (text !== undefined) sealed.push(sealText(ctx.sealKey, "text", text));
      if (rationale !== undefined) sealed.push(sealText(ctx.sealKey, "rationale", rationale));
    }
    if (sealed.length > 0) event.sealed = sealed;
  } else {
    if (text !== undefined) event.text = text;
    if (rationale !== undefined) event.rationale = rationale;
  }
  event.redactions = counter.redactions;
  return { ok: true, event };
}

function kindOf(type: string, payload: Record<string, unknown>): string {
  switch (type) {
    case "memory_note.v1":
      return payload.kind as string;
    case "memory_event.v1":
      return String(payload.kind).slice(0, 64);
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
    default:
      return "control";
  }
}
