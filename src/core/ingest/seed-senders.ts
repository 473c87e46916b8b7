import type { LearningOrigin } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";

/** The sender of a seed.json learning confirmed there: its engram keeps when and where from. */
export const SEED_SENDER_ID = "pai-seed";
/** The sender of a pending seed.json proposal: where from, not confirmed. */
export const SEED_PROPOSAL_SENDER_ID = "pai-seed-proposal";

/**
 * Where a note imported from another memory came from: its `sender.run_id` is the source,
 * and a confirmed learning's `sent_at` the time it was confirmed there.
 */
export function originOfEvent(
  event: Pick<MemoryEvent, "sender" | "sent_at">,
): LearningOrigin | undefined {
  if (event.sender.role !== "operator") return undefined;
  const source = event.sender.run_id ?? "seed.json";
  if (event.sender.id === SEED_SENDER_ID) return { source, confirmed_at: event.sent_at };
  if (event.sender.id === SEED_PROPOSAL_SENDER_ID) return { source };
  return undefined;
}
