import { quarantineExcerpt } from "../core/ingest/event-keys.js";
import type { Redactor } from "../core/ingest/redact.js";
import { ENVELOPE_SCHEMA_VERSION, type MessageType } from "../schema/envelope.js";
import type { QuarantineRecord } from "../state/quarantine.js";

/**
 * The TCP hub's wire protocol: NDJSON envelopes (`agentbus-envelope/v1`), one per line, both
 * ways. A worker opens with `protocol_hello.v1` (its seq 0); the hub answers
 * `protocol_welcome.v1` or `protocol_incompatibility.v1` (and closes). The worker's messages
 * after the hello are numbered 1, 2, 3... on that connection (`seq`, restarting on every
 * connection); the hub acknowledges them in order with `bus_ack.v1` once they are durable.
 */
export const PROTOCOL_VERSION = "1";

/**
 * Versions a hello may name: ours, and the upstream specification's "0.1", whose payloads the
 * hub reads (nested `worker` and `repo`); the welcome names the one selected.
 */
export const ACCEPTED_PROTOCOL_VERSIONS: readonly string[] = [PROTOCOL_VERSION, "0.1"];

export const MSG = {
  hello: "protocol_hello.v1",
  welcome: "protocol_welcome.v1",
  incompatible: "protocol_incompatibility.v1",
  ack: "bus_ack.v1",
  heartbeat: "heartbeat.v1",
  syncRequired: "sync_required.v1",
  announce: "engram_announce.v1",
  catalogSnapshot: "engram_catalog_snapshot.v1",
  sessionEnd: "session_end.v1",
} as const satisfies Record<string, MessageType>;

/**
 * What the hub tells a worker on `protocol_welcome.v1`: upstream's `director` block, then our
 * additive flat fields.
 */
export interface WelcomePayload {
  protocol_version: string;
  director: {
    run_id: string;
    main_sha_expected?: string;
    catalog_hash_expected?: string;
  };
  catalog_version: number;
  catalog_hash: string;
  max_message_bytes: number;
  heartbeat_interval_seconds: number;
  heartbeat_ttl_seconds: number;
}

/** Why the hub refused a connection on `protocol_incompatibility.v1`. */
export interface IncompatibilityPayload {
  /**
   * `connection_limit`: the hub holds `agent_bus.max_connections` already (try again later).
   * `client_certificate`: a `tls://` hub does not trust the worker's certificate (for good).
   */
  reason: "protocol_version" | "hello_expected" | "connection_limit" | "client_certificate";
  detail: string;
  protocol_version_expected: string;
  protocol_version_seen: string | null;
  max_connections?: number;
}

/** Messages a worker sends may reach this many bytes before the hub flags them (its own limit). */
export const CLIENT_MAX_INCOMING_BYTES = 16 * 1024 * 1024;

/** Bytes of an oversized line kept for its quarantine excerpt (redacted, then cut shorter). */
const OVERSIZED_HEAD_BYTES = 4096;

/** One line of NDJSON cut from a byte stream, or the head of one too long to hold. */
export type Frame =
  | { kind: "line"; text: string }
  | { kind: "oversized"; head: string; bytes: number };

/**
 * Cuts a byte stream into lines. It never holds more than `maxBytes` of an unfinished line:
 * a longer one is reported once as `oversized` (with its head, for the quarantine) and the
 * rest of it is skipped up to its newline, so the connection carries on with the next line.
 * A trailing `\r` is dropped; blank lines are skipped.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private skipping = false;

  constructor(readonly maxBytes: number) {}

  /** Bytes held of the unfinished line. */
  get held(): number {
    return this.partBytes;
  }

  push(chunk: Buffer, out: Frame[]): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.skipping) {
        if (newline === -1) return;
        this.skipping = false;
        start = newline + 1;
        continue;
      }
      const length = end - start;
      if (this.partBytes + length > this.maxBytes) {
        const head = Buffer.concat([
          ...this.parts,
          chunk.subarray(start, start + Math.min(length, OVERSIZED_HEAD_BYTES)),
        ]).subarray(0, OVERSIZED_HEAD_BYTES);
        out.push({
          kind: "oversized",
          head: head.toString("utf8"),
          bytes: this.partBytes + length,
        });
        this.parts = [];
        this.partBytes = 0;
        if (newline === -1) {
          this.skipping = true;
          return;
        }
        start = newline + 1;
        continue;
      }
      if (newline === -1) {
        // A copy: the held part must not pin the whole chunk it came in.
        this.parts.push(Buffer.from(chunk.subarray(start)));
        this.partBytes += length;
        return;
      }
      let text: string;
      if (this.parts.length === 0) {
        text = chunk.toString("utf8", start, end);
      } else {
        text = Buffer.concat([...this.parts, chunk.subarray(start, end)]).toString("utf8");
        this.parts = [];
        this.partBytes = 0;
      }
      if (text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1);
      if (!isBlank(text)) out.push({ kind: "line", text });
      start = newline + 1;
    }
  }
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** The quarantine record of a line the splitter flagged as oversized; its excerpt is redacted. */
export function oversizedRecord(
  frame: Extract<Frame, { kind: "oversized" }>,
  where: { source: string; line: number; receivedAt: string; maxBytes: number },
  redactor: Redactor,
): { record: QuarantineRecord; redactions: number } {
  const excerpt = quarantineExcerpt(frame.head, redactor);
  return {
    redactions: excerpt.count,
    record: {
      received_at: where.receivedAt,
      source: where.source,
      line: where.line,
      reason: "oversized",
      detail: `line longer than ${frame.bytes} bytes, over agent_bus.max_message_bytes (${where.maxBytes}); not read to its end`,
      excerpt: excerpt.text,
      bytes: frame.bytes,
    },
  };
}

/** One NDJSON line of an envelope the Director sends. */
export function directorLine(
  messageType: MessageType,
  payload: object,
  seq: number,
  sentAt: string,
): string {
  return `${JSON.stringify({
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: messageType,
    sent_at: sentAt,
    sender: { role: "director", id: "director" },
    seq,
    payload,
  })}\n`;
}

/**
 * An envelope serialized once without its `seq`, so it can be put on any connection with the
 * seq of that connection (a resend keeps everything else, its `event_id` above all).
 */
export function bodyWithoutSeq(envelope: Record<string, unknown>): string {
  const { seq: _seq, ...rest } = envelope;
  return JSON.stringify(rest);
}

/** The line of a body made by `bodyWithoutSeq`, numbered for one connection. */
export function lineWithSeq(body: string, seq: number): string {
  return body.length > 2 ? `{"seq":${seq},${body.slice(1)}\n` : `{"seq":${seq}}\n`;
}

/** `HOST:PORT`, with an IPv6 host in brackets, as the `--listen` flag and bus URLs write it. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Whether a listen address stays on this machine: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice("::ffff:".length) : h;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return m !== null && m[1] === "127" && m.slice(1).every((n) => Number(n) <= 255);
}
