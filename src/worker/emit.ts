import { sealText } from "../core/seal.js";
import type { RepoContext } from "../director/context.js";
import { loadSealKey } from "../state/seal-key.js";
import { writeSpoolFile } from "../state/spool.js";
import { buildEnvelope, workerId } from "./envelope.js";

export interface NoteInput {
  kind: string;
  text: string;
  rationale?: string | undefined;
  topics: string[];
  links: string[];
  confidence?: number | undefined;
  outcome?: string | undefined;
  privacy?: string | undefined;
  issue?: string | undefined;
}

export interface EmitResult {
  event_id: string;
  message_type: string;
  spooled: true;
  path: string;
}

/** Writes one `memory_note.v1` envelope to the local spool: durable when this returns. */
export function emitNote(
  ctx: RepoContext,
  note: NoteInput,
  sender: { worker?: string | undefined; runId?: string | undefined },
): EmitResult {
  const payload: Record<string, unknown> = {
    kind: note.kind,
    text: note.text,
    topics: note.topics,
    links: note.links,
  };
  if (note.rationale !== undefined) payload.rationale = note.rationale;
  if (note.privacy === "sensitive") {
    // Sealed here, so the clear text never touches the spool or the bus.
    const key = loadSealKey(ctx.paths.sealKey, true) as Uint8Array;
    payload.sealed = [
      sealText(key, "text", note.text),
      ...(note.rationale !== undefined ? [sealText(key, "rationale", note.rationale)] : []),
    ];
    delete payload.text;
    delete payload.rationale;
  }
  if (note.confidence !== undefined) payload.confidence = note.confidence;
  if (note.outcome !== undefined) payload.outcome = note.outcome;
  if (note.privacy !== undefined) payload.privacy = note.privacy;
  if (note.issue !== undefined) payload.issue = note.issue;
  return spoolEnvelope(ctx, "memory_note.v1", payload, sender);
}

export function spoolEnvelope(
  ctx: RepoContext,
  messageType: Parameters<typeof buildEnvelope>[0],
  payload: Record<string, unknown>,
  sender: { worker?: string | undefined; runId?: string | undefined },
): EmitResult {
  const now = Date.now();
  const envelope = buildEnvelope(
    messageType,
    payload,
    { id: workerId(sender.worker), run_id: sender.runId ?? process.env.GITHUB_RUN_ID },
    new Date(now).toISOString(),
  );
  const path = writeSpoolFile(ctx.paths.spool, [JSON.stringify(envelope)], now);
  return { event_id: envelope.event_id, message_type: messageType, spooled: true, path };
}
