import { sealText } from "../core/seal.js";
import type { RepoContext } from "../director/context.js";
import { readCatalog } from "../repo/memory-tree.js";
import { loadSealKey } from "../state/seal-key.js";
import { writeSpoolFile } from "../state/spool.js";
import { readDrift } from "./drift.js";
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

export interface HeartbeatInput {
  stage?: string | undefined;
  issue?: string | undefined;
  attempt?: number | undefined;
  progress?: number | undefined;
  main?: string | undefined;
}

/**
 * Writes one `heartbeat.v1` envelope to the local spool, carrying where this branch left
 * main (`main_ancestor_sha`) and the catalog hash the worker sees, for drift detection.
 */
export async function emitHeartbeat(
  ctx: RepoContext,
  beat: HeartbeatInput,
  sender: { worker?: string | undefined; runId?: string | undefined },
): Promise<EmitResult & { main_ancestor_sha: string | null; catalog_hash_seen: string }> {
  const drift = await readDrift(ctx, beat.main);
  const catalog = await readCatalog(ctx.repoDir);
  const payload: Record<string, unknown> = { catalog_hash_seen: catalog.hash };
  if (beat.stage !== undefined) payload.stage = beat.stage;
  if (beat.issue !== undefined) payload.issue = beat.issue;
  if (beat.attempt !== undefined) payload.attempt = beat.attempt;
  if (beat.progress !== undefined) payload.progress = beat.progress;
  if (drift?.main_ancestor_sha) payload.main_ancestor_sha = drift.main_ancestor_sha;
  const result = spoolEnvelope(ctx, "heartbeat.v1", payload, sender);
  return {
    ...result,
    main_ancestor_sha: drift?.main_ancestor_sha ?? null,
    catalog_hash_seen: catalog.hash,
  };
}
