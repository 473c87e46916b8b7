import { redactSenderId } from "../core/ingest/event-keys.js";
import { createRedactor } from "../core/ingest/redact.js";
import { linkRefProblem, notOneLine } from "../core/model/fields.js";
import { UsageError } from "../errors.js";
import type { Envelope } from "../schema/envelope.js";
import { ENVELOPE_SCHEMA_VERSION, type MessageType } from "../schema/message-types.js";
import { newEventId } from "../state/random-id.js";
import { surelyValid } from "./envelope-check.js";

const FLAGS: Record<string, string> = { topics: "--topic", links: "--link" };

function flagFor(field: PropertyKey | undefined): string {
  const name = String(field ?? "payload");
  return FLAGS[name] ?? `--${name}`;
}

const redactor = createRedactor();

/**
 * The worker's id on the bus: `--worker`, `ENGRAM_WORKER_ID`, or one derived from the host.
 * Redacted before unsafe characters are replaced: `DB_PASSWORD=...` must not become
 * `DB_PASSWORD-...` with its value intact.
 */
export function workerId(explicit: string | undefined): string {
  const raw =
    explicit ??
    process.env.ENGRAM_WORKER_ID ??
    `worker-${process.getBuiltinModule("node:os").hostname()}`;
  const id = redactSenderId(raw, redactor)
    .text.replace(/[^A-Za-z0-9_-]/g, "-")
    .slice(0, 128);
  if (id.length === 0) throw new UsageError("--worker: expected a non-empty id");
  return id;
}

/**
 * Builds and validates an envelope the way the Director will read it, so a bad note is
 * refused at the worker (exit 2, naming the field: as its command-line flag, or as the
 * payload field for notes read from a file) instead of landing in the quarantine.
 */
export async function buildEnvelope(
  messageType: MessageType,
  payload: Record<string, unknown>,
  sender: { id: string; run_id?: string | undefined },
  sentAt: string,
  seq = 0,
  naming: "flag" | "field" = "flag",
): Promise<Envelope & { event_id: string }> {
  const envelope = {
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: messageType,
    sent_at: sentAt,
    sender: {
      role: "worker" as const,
      id: sender.id,
      ...(sender.run_id ? { run_id: sender.run_id } : {}),
    },
    seq,
    payload,
    event_id: newEventId(),
  };
  const oneLine = oneLineIssues(messageType, payload);
  if (oneLine.length > 0) {
    throw new UsageError(
      oneLine
        .map((i) => `${naming === "flag" ? flagFor(i.path[0]) : i.path.join(".")}: ${i.message}`)
        .join("; "),
    );
  }
  if (surelyValid(envelope)) return envelope;
  // In doubt: the zod schemas decide and name the field (loaded only now: start-up).
  const { Envelope, PAYLOAD_SCHEMAS } = await import("../schema/envelope.js");
  const checked = Envelope.safeParse(envelope);
  if (!checked.success) {
    throw new UsageError(
      checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    );
  }
  const body = PAYLOAD_SCHEMAS[messageType].safeParse(payload);
  if (!body.success) {
    throw new UsageError(
      body.error.issues
        .map((i) => {
          const where = naming === "flag" ? flagFor(i.path[0]) : i.path.map(String).join(".");
          return `${where || "payload"}: ${i.message}`;
        })
        .join("; "),
    );
  }
  return envelope;
}

/**
 * The one-line fields of a note or an event (topics, links, issue, an event's kind) that the
 * Director could not keep as given: refused here, naming the flag, rather than quarantined or
 * rewritten there. The schemas let a line break through; memory files built from it must not.
 */
export function oneLineIssues(
  messageType: MessageType,
  payload: Record<string, unknown>,
): { path: (string | number)[]; message: string }[] {
  if (messageType !== "memory_note.v1" && messageType !== "memory_event.v1") return [];
  const out: { path: (string | number)[]; message: string }[] = [];
  const list = (field: "topics" | "links") =>
    Array.isArray(payload[field]) ? (payload[field] as unknown[]).entries() : [].entries();
  for (const [i, topic] of list("topics")) {
    const broken = typeof topic === "string" ? notOneLine(topic) : undefined;
    if (broken !== undefined) {
      out.push({ path: ["topics", i], message: `a topic is one line: this one holds ${broken}` });
    }
  }
  for (const [i, link] of list("links")) {
    const ref =
      typeof link === "string"
        ? link
        : typeof link === "object" &&
            link !== null &&
            typeof (link as { ref?: unknown }).ref === "string"
          ? (link as { ref: string }).ref
          : undefined;
    const problem = ref === undefined ? undefined : linkRefProblem(ref);
    if (problem !== undefined) out.push({ path: ["links", i], message: problem });
  }
  for (const field of ["issue", ...(messageType === "memory_event.v1" ? ["kind"] : [])]) {
    const value = payload[field];
    const broken = typeof value === "string" ? notOneLine(value) : undefined;
    if (broken !== undefined) {
      out.push({ path: [field], message: `one line expected: this value holds ${broken}` });
    }
  }
  return out;
}
