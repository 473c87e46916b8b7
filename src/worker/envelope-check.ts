import { envelopeHeadOk, eventOk, noteOk } from "../schema/envelope-fast.js";

/**
 * Whether an envelope a worker built is certainly one the zod schemas accept (envelope and
 * payload), checked by hand: `worker emit` and `worker recall` then never load zod. Only the
 * two payloads workers send from the command line are known here (`memory_note.v1` and
 * `memory_event.v1`); anything else, or anything unusual (a sealed note, a time with an
 * offset), is "not sure", and the zod schemas decide. Never true for an envelope zod refuses:
 * `test/worker/envelope-check.test.ts` holds the two to agreement.
 */
export function surelyValid(envelope: Record<string, unknown>): boolean {
  if (!envelopeHeadOk(envelope)) return false;
  const payload = envelope.payload as Record<string, unknown>;
  if (envelope.message_type === "memory_note.v1") return noteOk(payload);
  if (envelope.message_type === "memory_event.v1") return eventOk(payload);
  return false;
}
