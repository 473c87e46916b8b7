import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { redactSenderId } from "../core/ingest/event-keys.js";
import { createRedactor } from "../core/ingest/redact.js";
import { UsageError } from "../errors.js";
import type { Envelope } from "../schema/envelope.js";
import { ENVELOPE_SCHEMA_VERSION, type MessageType } from "../schema/message-types.js";
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
  const raw = explicit ?? process.env.ENGRAM_WORKER_ID ?? `worker-${hostname()}`;
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
    event_id: `ev_${randomUUID().replace(/-/g, "")}`,
  };
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
