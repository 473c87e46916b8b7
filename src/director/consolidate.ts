import type { RepoContext } from "../context/repo-context.js";
import type { FocusDocuments } from "../core/rendering/focus.js";
import { focusCandidates } from "../core/rendering/focus.js";
import type { SessionReport } from "../core/versions/consolidate.js";
import { loadMaster } from "../core/versions/documents.js";
import { KNOWLEDGE_KINDS, type SessionItem } from "../core/versions/items.js";
import { parseVersionLog, VERSION_LOG_PATH, type VersionRecord } from "../core/versions/log.js";
import { type KnowledgeRecord, knowledgeFromLearnings } from "../core/versions/master.js";
import {
  type EndedSession,
  FOCUS_DOCUMENT_KINDS,
  focusDocumentsOf,
  planSessionStep,
  type StepSettings,
  type StepState,
  type VersionStep,
} from "../core/versions/step.js";
import { StateError } from "../errors.js";
import { readConfinedText } from "../repo/confine.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import type { SessionEndPayload } from "../schema/envelope.js";
import { type EventBuffer, holdsSessionEnd } from "../state/buffer.js";
import { type CycleIntent, commitCycle } from "./cycle-intent.js";

/** What `director run --json` says of one consolidated session. */
export type SessionStepReport = SessionReport & {
  catalog_hash: string;
  /** Sessions whose episode files the budgets evicted in this step. */
  evicted_sessions: string[];
  /** Mentions in the state and core documents written that name nothing known. */
  unlinked_mentions?: string[];
};

interface Parts {
  parts: Map<number, SessionEndPayload>;
  total: number;
  lastSeq: number;
  receivedAt: string;
}

/**
 * The ended sessions in the buffer that memory does not hold yet, whole (every part), in the
 * order the Director received their ends.
 */
export function pendingSessions(buffer: EventBuffer, applied: ReadonlySet<string>) {
  const byId = new Map<string, Parts>();
  for (const { event } of buffer.events) {
    const part = event.session;
    if (event.type !== "session_end.v1" || part === undefined) continue;
    if (applied.has(part.session_id)) continue;
    const entry = byId.get(part.session_id) ?? {
      parts: new Map(),
      total: part.parts,
      lastSeq: 0,
      receivedAt: event.received_at,
    };
    entry.parts.set(part.part, part);
    entry.lastSeq = Math.max(entry.lastSeq, event.seq);
    if (event.received_at > entry.receivedAt) entry.receivedAt = event.received_at;
    byId.set(part.session_id, entry);
  }
  const whole: EndedSession[] = [];
  let incomplete = 0;
  for (const [id, entry] of [...byId].sort(([, a], [, b]) => a.lastSeq - b.lastSeq)) {
    if (entry.parts.size < entry.total) {
      incomplete++;
      continue;
    }
    const ordered = [...entry.parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p);
    const first = ordered[0] as SessionEndPayload;
    whole.push({
      session_id: id,
      name: first.name ?? null,
      parent_version: first.parent_version,
      parent_catalog_hash: first.parent_catalog_hash,
      parent_commit: first.parent_commit ?? null,
      ended_at: first.ended_at,
      received_at: entry.receivedAt,
      items: ordered.flatMap((p) => p.items) as SessionItem[],
    });
  }
  return { whole, incomplete };
}

async function readVersionLog(repoDir: string): Promise<VersionRecord[]> {
  const text = await readConfinedText(repoDir, VERSION_LOG_PATH);
  return text === undefined ? [] : parseVersionLog(text);
}

/** Sessions memory already holds: named by the version log, or by an episode file. */
function appliedSessions(log: readonly VersionRecord[], catalog: Catalog): Set<string> {
  const ids = new Set<string>();
  for (const r of log) if (r.made_by.kind === "session") ids.add(r.made_by.session_id);
  for (const d of catalog.documents ?? []) {
    if (d.kind === "session") ids.add(d.path.slice(d.path.lastIndexOf("/") + 1, -".json".length));
  }
  return ids;
}

async function readDocuments(repoDir: string, catalog: Catalog, kinds?: ReadonlySet<string>) {
  const texts = new Map<string, string>();
  for (const d of catalog.documents ?? []) {
    if (kinds !== undefined && !kinds.has(d.kind)) continue;
    const text = await readConfinedText(repoDir, d.path, "document");
    if (text === undefined) {
      throw new StateError(`${d.path}: listed in memory/catalog.json, missing (director verify)`);
    }
    texts.set(d.path, text);
  }
  return texts;
}

/**
 * The learnings every engram of the catalog holds, when a session may restate one (a
 * knowledge item with a text): the claims a duplicate raises the evidence of.
 */
async function engramLearnings(
  ctx: RepoContext,
  catalog: Catalog,
  sessions: readonly EndedSession[],
): Promise<KnowledgeRecord[]> {
  const kinds = new Set<string>(KNOWLEDGE_KINDS);
  const restates = sessions.some((s) =>
    s.items.some((i) => kinds.has(i.kind) && i.text !== undefined),
  );
  if (!restates || ctx.config.sessions.knowledge === "off" || catalog.entries.length === 0) {
    return [];
  }
  // Cached by the catalog's engram entries: a cycle whose engrams did not change reads one file.
  const { engramClaims } = await import("../graph/engram-claims.js");
  return knowledgeFromLearnings(await engramClaims(ctx, catalog), catalog.catalog_version);
}

/** The core and state documents MEMORY.md shows; undefined when the catalog lists none. */
export async function loadFocusDocuments(
  repoDir: string,
  catalog: Catalog,
): Promise<FocusDocuments | undefined> {
  if (!(catalog.documents ?? []).some((d) => FOCUS_DOCUMENT_KINDS.has(d.kind))) return undefined;
  return focusDocumentsOf(catalog, await readDocuments(repoDir, catalog, FOCUS_DOCUMENT_KINDS));
}

/**
 * Consolidates every ended session the buffer holds and memory does not, in the order their
 * ends were received: one version step each. The steps are made durable as a cycle intent
 * before any file changes (several steps to an intent), so a crash leaves every session
 * applied whole or not at all: the next run finishes the intent and goes on with the rest.
 */
export async function consolidateEndedSessions(
  ctx: RepoContext,
  buffer: EventBuffer,
): Promise<SessionStepReport[]> {
  if (!holdsSessionEnd(buffer)) return [];
  const catalog = await readCatalog(ctx.repoDir);
  const log = await readVersionLog(ctx.repoDir);
  const { whole } = pendingSessions(buffer, appliedSessions(log, catalog));
  if (whole.length === 0) return [];

  const texts = await readDocuments(ctx.repoDir, catalog);
  const memory = ctx.config.memory;
  const candidates = focusCandidates(catalog, memory.memory_md_max_items * 4);
  const sessions = ctx.config.sessions;
  const settings: StepSettings = {
    rules: sessions,
    episodesMax: sessions.episodes_max,
    documentsMaxBytes: sessions.documents_max_bytes,
    engrams: await loadEngrams(ctx.repoDir, candidates),
    focus: memory,
    // Loaded only when a session is consolidated, as a cycle with work loads it.
    registry: (await import("../graph/registry.js")).loadRegistry(ctx.repoDir),
    ...(memory.memory_md_update_cadence !== "on_merge" && buffer.meta.focus_now !== undefined
      ? { now: buffer.meta.focus_now }
      : {}),
    // Sessions write no engrams: the learnings are the same for every step of the run.
    learnings: await engramLearnings(ctx, catalog, whole),
  };
  let state: StepState = {
    catalog,
    loaded: loadMaster(catalog.catalog_version, catalog.documents ?? [], texts),
    log,
  };
  const reports: SessionStepReport[] = [];
  let batch: VersionStep[] = [];
  let batchBytes = 0;
  for (const session of whole) {
    const step = planSessionStep(state, session, settings);
    const bytes = step.files.writes.reduce((n, w) => n + w.text.length, 0);
    if (batch.length > 0 && batchBytes + bytes > INTENT_MAX_CHARS) {
      await commitSteps(ctx, buffer, batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(step);
    batchBytes += bytes;
    state = step.state;
    reports.push({ ...step.report, catalog_hash: step.record.catalog_hash });
  }
  if (batch.length > 0) await commitSteps(ctx, buffer, batch);
  return reports;
}

/**
 * Versions made durable together: their snapshots, then one intent with the sum of their
 * files. Bounded so that a large memory (a large catalog in every version) never holds more
 * than this many characters of versions' files at once.
 */
const INTENT_MAX_CHARS = 16 * 1024 * 1024;

/**
 * The steps' snapshots are written first, one version after the other, then the intent of
 * their files: a crash in between leaves tags ahead of the tree, and the next run, planning
 * the same steps from the same buffer and memory, keeps them (or moves a tag that another
 * cycle's memory made stale). The intent carries only what lands in the tree.
 */
async function commitSteps(
  ctx: RepoContext,
  buffer: EventBuffer,
  steps: readonly VersionStep[],
): Promise<void> {
  const { onVersions } = await import("./version-hook.js");
  await onVersions(ctx, steps);
  // The last version's text of each path wins; a path deleted after it was written is gone.
  const final = new Map<string, string | null>();
  for (const step of steps) {
    for (const w of step.files.writes) final.set(w.path, w.text);
    for (const d of step.files.deletes) final.set(d, null);
  }
  const writes: CycleIntent["writes"] = [];
  const deletes: string[] = [];
  for (const [path, text] of final) {
    if (text === null) deletes.push(path);
    else writes.push({ path, text });
  }
  const intent: CycleIntent = {
    through_seq: 0,
    writes,
    deletes,
    meta: {},
  };
  await commitCycle(ctx, buffer, intent);
}
