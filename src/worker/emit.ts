import { type Delivery, openSender } from "../bus/sender.js";
import type { BusUrl } from "../bus/url.js";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { redactorFor } from "../core/ingest/redact.js";
import { sealText } from "../core/ingest/seal.js";
import { UsageError } from "../errors.js";
import type { Envelope, MessageType } from "../schema/envelope.js";
import { loadSealKey } from "../state/seal-key.js";
import { buildEnvelope, workerId } from "./envelope.js";
import { strandedWarning } from "./stranded.js";
import { resolveSupersedes, type SupersededItem } from "./supersedes.js";

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
  /** Note ids of memory items this note replaces (resolved to their text when sent). */
  supersedes?: readonly string[] | undefined;
}

export interface EmitResult extends Delivery {
  event_id: string;
  message_type: string;
}

export interface SenderIdentity {
  worker?: string | undefined;
  runId?: string | undefined;
}

/** Sends one `memory_note.v1` envelope over the bus: durable (there or spooled) when this returns. */
export async function emitNote(
  ctx: RepoContext,
  note: NoteInput,
  sender: SenderIdentity,
  bus: BusUrl = { kind: "spool" },
): Promise<EmitResult> {
  const replaced = await resolveSupersedes(ctx, note.supersedes ?? []);
  return sendEnvelope(ctx, "memory_note.v1", notePayload(ctx, note, replaced), sender, bus);
}

export interface EmitManyResult extends Delivery {
  event_ids: string[];
  message_type: "memory_note.v1";
}

/**
 * Sends several notes as one delivery (one spool file, one NATS message, one ref commit, one
 * hub send). Every note is built and checked first: a bad one (`describe` says which, from
 * its index) sends nothing.
 */
export async function emitNotes(
  ctx: RepoContext,
  notes: readonly NoteInput[],
  sender: SenderIdentity,
  bus: BusUrl,
  describe: (index: number) => string,
): Promise<EmitManyResult> {
  const from = senderFields(sender);
  const sentAt = new Date().toISOString();
  const envelopes: (Envelope & { event_id: string })[] = [];
  for (const [i, note] of notes.entries()) {
    try {
      const replaced = await resolveSupersedes(ctx, note.supersedes ?? [], "supersedes");
      const payload = notePayload(ctx, note, replaced);
      envelopes.push(await buildEnvelope("memory_note.v1", payload, from, sentAt, i, "field"));
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`${describe(i)}: ${error.message}`);
      throw error;
    }
  }
  const delivery = await deliver(ctx, envelopes, bus);
  return {
    event_ids: envelopes.map((e) => e.event_id),
    message_type: "memory_note.v1",
    ...delivery,
  };
}

/** The envelope's `sender`, from the flags or their environment defaults. */
function senderFields(sender: SenderIdentity): { id: string; run_id: string | undefined } {
  return { id: workerId(sender.worker), run_id: sender.runId ?? process.env.GITHUB_RUN_ID };
}

/** A note's payload; a sensitive one sealed here, so its clear text never leaves. */
function notePayload(
  ctx: RepoContext,
  note: NoteInput,
  replaced: readonly SupersededItem[] = [],
): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    kind: note.kind,
    text: note.text,
    topics: note.topics,
    links: note.links,
  };
  if (note.rationale !== undefined) payload.rationale = note.rationale;
  if (note.privacy === "sensitive") {
    // Sealed here, so the clear text never touches the spool or the bus; redacted first, as
    // the Director would before sealing, so that opening a note never shows a credential.
    const key = loadSealKey(ctx.paths.sealKey, true) as Uint8Array;
    const redactor = redactorFor(ctx.config);
    const clear = (text: string) => redactor.redact(text).text;
    payload.sealed = [
      sealText(key, "text", clear(note.text)),
      ...(note.rationale !== undefined ? [sealText(key, "rationale", clear(note.rationale))] : []),
    ];
    delete payload.text;
    delete payload.rationale;
  }
  if (note.confidence !== undefined) payload.confidence = note.confidence;
  if (note.outcome !== undefined) payload.outcome = note.outcome;
  if (note.privacy !== undefined) payload.privacy = note.privacy;
  if (note.issue !== undefined) payload.issue = note.issue;
  if (replaced.length > 0) payload.supersedes = replaced.map((r) => ({ ...r }));
  return payload;
}

/** Builds, validates and delivers one envelope from this worker. */
export async function sendEnvelope(
  ctx: RepoContext,
  messageType: MessageType,
  payload: Record<string, unknown>,
  sender: SenderIdentity,
  bus: BusUrl,
): Promise<EmitResult> {
  const envelope = await buildEnvelope(
    messageType,
    payload,
    senderFields(sender),
    new Date().toISOString(),
  );
  const delivery = await deliver(ctx, [envelope], bus);
  return { event_id: envelope.event_id, message_type: messageType, ...delivery };
}

/**
 * Delivers envelopes over `bus`. What lands in a spool no Director drains is said (on the
 * caller's stderr, and as the delivery's `warning`), never left silent.
 */
export async function deliver(
  ctx: RepoContext,
  envelopes: readonly Envelope[],
  bus: BusUrl,
): Promise<Delivery> {
  const transport = await openSender(ctx, bus);
  let delivery: Delivery;
  try {
    delivery = await transport.send(envelopes);
  } finally {
    await transport.close();
  }
  if (!delivery.spooled) return delivery;
  const warning = strandedWarning(ctx, envelopes, delivery.fallback_reason);
  if (warning === undefined) return delivery;
  ctx.caller?.notice(`warning: ${warning}`);
  return { ...delivery, warning };
}

export interface HeartbeatInput {
  stage?: string | undefined;
  issue?: string | undefined;
  attempt?: number | undefined;
  progress?: number | undefined;
  main?: string | undefined;
}

/**
 * A heartbeat in the upstream shape, a `state` (WorkerState: stage, issue_number, attempt,
 * progress `{step, percent}`, repo `{base_branch, main_ancestor_sha, catalog_hash_seen}`,
 * last_update_at), with our flat fields beside it as aliases for older readers. A value the
 * flat field would refuse stays out of `state`, so the error names its flag.
 */
export function heartbeatPayload(
  beat: HeartbeatInput,
  repo: {
    main_ancestor_sha?: string | undefined;
    base_branch?: string | undefined;
    catalog_hash_seen: string;
    last_update_at: string;
  },
): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  if (beat.stage !== undefined && beat.stage.length > 0 && beat.stage.length <= 512) {
    state.stage = beat.stage;
  }
  const issueNumber = beat.issue === undefined ? undefined : /^#?(\d+)$/.exec(beat.issue.trim());
  if (issueNumber) state.issue_number = Number(issueNumber[1]);
  if (beat.attempt !== undefined && Number.isInteger(beat.attempt) && beat.attempt >= 0) {
    state.attempt = beat.attempt;
  }
  if (beat.progress !== undefined && beat.progress >= 0 && beat.progress <= 1) {
    state.progress = {
      step: beat.stage ?? "working",
      percent: Math.round(beat.progress * 1000) / 10,
    };
  }
  state.repo = {
    ...(repo.base_branch !== undefined ? { base_branch: repo.base_branch } : {}),
    ...(repo.main_ancestor_sha ? { main_ancestor_sha: repo.main_ancestor_sha } : {}),
    catalog_hash_seen: repo.catalog_hash_seen,
  };
  state.last_update_at = repo.last_update_at;
  const payload: Record<string, unknown> = { state, catalog_hash_seen: repo.catalog_hash_seen };
  if (beat.stage !== undefined) payload.stage = beat.stage;
  if (beat.issue !== undefined) payload.issue = beat.issue;
  if (beat.attempt !== undefined) payload.attempt = beat.attempt;
  if (beat.progress !== undefined) payload.progress = beat.progress;
  if (repo.main_ancestor_sha) payload.main_ancestor_sha = repo.main_ancestor_sha;
  return payload;
}

/**
 * Sends one `heartbeat.v1` envelope over the bus, carrying where this branch left
 * main (`main_ancestor_sha`) and the catalog hash the worker sees, for drift detection.
 */
export async function emitHeartbeat(
  ctx: RepoContext,
  beat: HeartbeatInput,
  sender: SenderIdentity,
  bus: BusUrl = { kind: "spool" },
): Promise<EmitResult & { main_ancestor_sha: string | null; catalog_hash_seen: string }> {
  // Only a heartbeat reads git and the catalog: loaded here so `worker emit` starts without
  // isomorphic-git or the engram schemas.
  const [{ readDrift }, { readCatalog }] = await Promise.all([
    import("../repo/drift.js"),
    import("../repo/memory-tree.js"),
  ]);
  const drift = await readDrift(ctx.repoDir, ctx.config.policy.sync_main, beat.main);
  const catalog = await readCatalog(ctx.repoDir);
  const payload = heartbeatPayload(beat, {
    main_ancestor_sha: drift?.main_ancestor_sha ?? undefined,
    base_branch: drift?.main_ref,
    catalog_hash_seen: catalog.hash,
    last_update_at: receiptTime(),
  });
  const result = await sendEnvelope(ctx, "heartbeat.v1", payload, sender, bus);
  return {
    ...result,
    main_ancestor_sha: drift?.main_ancestor_sha ?? null,
    catalog_hash_seen: catalog.hash,
  };
}
