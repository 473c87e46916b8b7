import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { redactorFor, redactValue } from "../core/ingest/redact.js";
import { sealText } from "../core/ingest/seal.js";
import {
  DOCUMENT_KEY_RE,
  EPISODE_OUTCOMES,
  type EpisodeOutcome,
  SESSION_ITEM_KINDS,
  type SessionItem,
  type SessionItemKind,
} from "../core/versions/items.js";
import { UsageError } from "../errors.js";
import { headSha } from "../git/activity-log.js";
import { readCatalog } from "../repo/memory-tree.js";
import { loadSealKey } from "../state/seal-key.js";
import {
  appendItem,
  createSession,
  discardSession,
  listSessionIds,
  newSessionId,
  readEnded,
  readSession,
  type SessionHeader,
  sessionsDir,
} from "./store.js";
import { checkWrittenItem, FLAGS_BY_KIND, type WriteFlag } from "./write-flags.js";

export interface SessionStart {
  session_id: string;
  name: string | null;
  parent_version: number;
  parent_catalog_hash: string;
  parent_commit: string | null;
}

/** Opens a session on the memory this work tree holds (its catalog) and HEAD's commit. */
export async function startSession(ctx: RepoContext, name?: string): Promise<SessionStart> {
  // The git process runs while the catalog is read.
  const [catalog, parentCommit] = await Promise.all([
    readCatalog(ctx.repoDir),
    headSha(ctx.repoDir),
  ]);
  const header: SessionHeader = {
    type: "session",
    session_id: newSessionId(),
    name: name ?? null,
    parent_version: catalog.catalog_version,
    parent_catalog_hash: catalog.hash,
    parent_commit: parentCommit,
    started_at: receiptTime(),
  };
  createSession(sessionsDir(ctx.paths.root), header);
  const { type: _type, started_at: _at, ...start } = header;
  return start;
}

/** One write as the flags give it, before validation. */
export type SessionWriteInput = { kind: string; confidence?: number | undefined } & {
  [F in Exclude<WriteFlag, "confidence">]?: string | undefined;
};

/** Checks the flags of one write against its kind and builds the item, unsealed and unredacted. */
export function itemFromInput(input: SessionWriteInput): Omit<SessionItem, "seq" | "written_at"> {
  const kind = input.kind as SessionItemKind;
  if (!SESSION_ITEM_KINDS.includes(kind)) {
    throw new UsageError(`--kind: expected ${SESSION_ITEM_KINDS.join(" | ")}, got "${input.kind}"`);
  }
  const { required, optional } = FLAGS_BY_KIND[kind];
  for (const [flag, value] of Object.entries(input)) {
    const taken = required.includes(flag as WriteFlag) || optional.includes(flag as WriteFlag);
    if (flag !== "kind" && value !== undefined && !taken) {
      throw new UsageError(`--${flag} does not go with --kind ${kind}`);
    }
  }
  for (const flag of required) {
    if (input[flag] === undefined)
      throw new UsageError(`--${flag} is required with --kind ${kind}`);
  }
  if (input.confidence !== undefined && !(input.confidence >= 0 && input.confidence <= 1)) {
    throw new UsageError(`--confidence: expected a number from 0 to 1, got ${input.confidence}`);
  }
  if (input.privacy !== undefined && !["public", "private", "sensitive"].includes(input.privacy)) {
    throw new UsageError(`--privacy: expected public | private | sensitive`);
  }
  // The table made every required flag present: the casts below only say so.
  const base = { kind, redactions: 0 };
  if (kind === "state" || kind === "core") {
    const key = input.key as string;
    if (!DOCUMENT_KEY_RE.test(key)) {
      throw new UsageError(
        `--key: expected lower-case letters, digits, _ . - (at most 64, starting with a letter or digit), got "${key}"`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(input.value as string);
    } catch (error) {
      throw new UsageError(`--value: not valid JSON (${(error as Error).message})`);
    }
    if (kind === "state") return { ...base, key, value };
    return { ...base, key, value, confidence: input.confidence as number };
  }
  const text = input.text as string;
  if (text.trim() === "") throw new UsageError("--text: expected non-empty text");
  const common = {
    ...base,
    text,
    confidence: input.confidence as number,
    ...(input.privacy !== undefined ? { privacy: input.privacy } : {}),
  };
  if (kind === "episode") {
    const outcome = input.outcome as string;
    if (!(EPISODE_OUTCOMES as readonly string[]).includes(outcome)) {
      throw new UsageError(`--outcome: expected ${EPISODE_OUTCOMES.join(" | ")}, got "${outcome}"`);
    }
    return { ...common, outcome: outcome as EpisodeOutcome };
  }
  return input.rationale !== undefined ? { ...common, rationale: input.rationale } : common;
}

/**
 * Seals sensitive text (its clear text never reaches the buffer) and redacts secrets from the
 * rest with the repository's rules, as `worker emit` and the bus do before anything is stored.
 */
export function protectItem<T extends Omit<SessionItem, "seq">>(ctx: RepoContext, item: T): T {
  const { sealed: _none, ...open } = item;
  let sealed: SessionItem["sealed"];
  if (item.privacy === "sensitive") {
    const key = loadSealKey(ctx.paths.sealKey, true) as Uint8Array;
    sealed = [];
    if (open.text !== undefined) sealed.push(sealText(key, "text", open.text));
    if (open.rationale !== undefined) sealed.push(sealText(key, "rationale", open.rationale));
    delete open.text;
    delete open.rationale;
  }
  // Only the free content is redacted: kind, key, outcome and stamps are checked tokens.
  const content: Record<string, unknown> = {};
  for (const field of ["text", "rationale", "value"] as const) {
    if (open[field] !== undefined) content[field] = open[field];
  }
  const redacted = redactValue(content, redactorFor(ctx.config));
  return {
    ...open,
    ...(redacted.value as Record<string, unknown>),
    ...(sealed !== undefined ? { sealed } : {}),
    redactions: redacted.count,
  } as T;
}

/** Writes one item to the session's buffer only: never to the bus, never to memory/. */
export async function writeToSession(
  ctx: RepoContext,
  sessionId: string,
  input: SessionWriteInput,
): Promise<SessionItem> {
  const item = protectItem(ctx, { ...itemFromInput(input), written_at: receiptTime() });
  checkWrittenItem(item, ctx.config.agent_bus.max_message_bytes);
  return appendItem(sessionsDir(ctx.paths.root), sessionId, item, ctx.config.sessions);
}

export function countsOf(items: readonly SessionItem[]): Record<SessionItemKind, number> {
  const counts = Object.fromEntries(SESSION_ITEM_KINDS.map((k) => [k, 0])) as Record<
    SessionItemKind,
    number
  >;
  for (const item of items) counts[item.kind]++;
  return counts;
}

export interface SessionView extends SessionStart {
  status: "open" | "ended";
  /** When `worker session end` sent it (absent while open). */
  ended_at?: string;
  started_at: string;
  items: SessionItem[];
  counts: Record<SessionItemKind, number>;
  bytes: number;
}

export function showSession(ctx: RepoContext, sessionId: string): SessionView {
  const dir = sessionsDir(ctx.paths.root);
  const { header, items, bytes } = readSession(dir, sessionId);
  const { type: _type, ...rest } = header;
  const ended = readEnded(dir, sessionId);
  return {
    ...rest,
    status: ended === undefined ? "open" : "ended",
    ...(ended !== undefined ? { ended_at: ended.ended_at } : {}),
    items,
    counts: countsOf(items),
    bytes,
  };
}

export function listSessions(ctx: RepoContext): Omit<SessionView, "items">[] {
  const dir = sessionsDir(ctx.paths.root);
  return listSessionIds(dir).map((id) => {
    const { items: _items, ...view } = showSession(ctx, id);
    return view;
  });
}

export async function discard(ctx: RepoContext, sessionId: string) {
  const dropped = await discardSession(sessionsDir(ctx.paths.root), sessionId, receiptTime());
  return { session_id: sessionId, discarded: true, items_dropped: dropped };
}
