import { redactSenderId } from "../core/ingest/event-keys.js";
import { type Redactor, redactValue } from "../core/ingest/redact.js";
import type { Envelope } from "../schema/envelope.js";

/**
 * Redacts what a worker wrote (payload, sender id, run id, event id) before it is written to
 * the spool or sent over any transport, with the same rules as the Director (the
 * repository's `[redaction] patterns` included). Sealed fields are ciphertext and stay as
 * they are; an event id without a secret is kept, so a resend still deduplicates.
 */
export function redactEnvelopes(
  envelopes: readonly Envelope[],
  redactor: Redactor,
): { envelopes: Envelope[]; redacted: number } {
  let redacted = 0;
  const out = envelopes.map((envelope) => {
    const { sealed, ...rest } = envelope.payload as Record<string, unknown>;
    const payload = redactValue(rest, redactor);
    redacted += payload.count;
    const sender = { ...envelope.sender };
    const id = redactSenderId(sender.id, redactor);
    sender.id = id.text;
    redacted += id.count;
    if (sender.run_id !== undefined) {
      const run = redactor.redact(sender.run_id);
      sender.run_id = run.text;
      redacted += run.count;
    }
    const clean: Envelope = {
      ...envelope,
      sender,
      payload: {
        ...(payload.value as Record<string, unknown>),
        ...(sealed !== undefined ? { sealed } : {}),
      },
    };
    if (typeof envelope.event_id === "string") {
      const eventId = redactor.redact(envelope.event_id);
      clean.event_id = eventId.text;
      redacted += eventId.count;
    }
    return clean;
  });
  return { envelopes: out, redacted };
}
