import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { replacementsOf } from "../core/graph/supersession.js";
import {
  carriedKeys,
  noteOfKnowledge,
  notesOfEngram,
  type RecallKnowledge,
  type RecallNote,
  type RecallScope,
} from "../core/recall/notes.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallHit,
  type RecallIndex,
  recall,
  type SerializedRecallIndex,
  serializeRecallIndex,
} from "../core/recall/recall.js";
import { EngramError } from "../errors.js";
import { readKnowledge } from "../repo/knowledge.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Catalog, Engram } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { sendEnvelope } from "./emit.js";
import { historyIndexFor } from "./history-index.js";
import { counted } from "./note-tokens.js";

interface CachedIndex {
  catalog_hash: string;
  index: SerializedRecallIndex;
}

/**
 * The recall index of a catalog's notes, cached built in the state folder by catalog hash:
 * a query loads one file instead of reading and tokenizing every engram, and the cache is
 * rebuilt whenever memory changes (or when it cannot be read).
 */
export async function recallIndexFor(
  ctx: RepoContext,
  catalog: Catalog,
  source: {
    /** Where the index is cached (default: the work tree's cache). */
    cacheName?: string;
    /** The engrams, when not the work tree's (a session reads its parent version's). */
    load?: () => Promise<Map<string, Engram>>;
    /** The sessions' knowledge, when not the work tree's. */
    knowledge?: () => Promise<RecallKnowledge[]>;
  } = {},
): Promise<RecallIndex> {
  const cachePath = join(ctx.paths.root, source.cacheName ?? "recall-index.json");
  if (existsSync(cachePath)) {
    try {
      const cached = JSON.parse(readFileSync(cachePath, "utf8")) as CachedIndex;
      const index =
        cached.catalog_hash === catalog.hash ? deserializeRecallIndex(cached.index) : undefined;
      if (index) return index;
    } catch {
      // a damaged cache is rebuilt below
    }
  }
  const engrams = source.load
    ? await source.load()
    : await loadEngrams(ctx.repoDir, catalog.entries);
  const listed = catalog.entries
    .map((entry) => engrams.get(entry.engram_id))
    .filter((e) => e !== undefined);
  const notes = memoryNotes(listed);
  const knowledge = source.knowledge
    ? await source.knowledge()
    : await readKnowledge(ctx.repoDir, catalog);
  for (const k of knowledge) notes.push(noteOfKnowledge(k));
  const index = buildRecallIndex(counted(notes));
  mkdirSync(ctx.paths.root, { recursive: true });
  const cache: CachedIndex = { catalog_hash: catalog.hash, index: serializeRecallIndex(index) };
  writeFileAtomicSync(cachePath, JSON.stringify(cache));
  return index;
}

/**
 * The notes of the listed engrams. An ST note is superseded only by an LT engram that names
 * its engram in `supersedes` and carries that very note: what promotion left behind stays.
 */
export function memoryNotes(engrams: readonly Engram[]): RecallNote[] {
  const carriers = new Map<string, { engram_id: string; keys: Set<string> }[]>();
  for (const engram of engrams) {
    if (engram.scope !== "lt" || !engram.supersedes?.length) continue;
    const carried = { engram_id: engram.engram_id, keys: carriedKeys(engram) };
    for (const id of engram.supersedes) {
      const list = carriers.get(id);
      if (list) list.push(carried);
      else carriers.set(id, [carried]);
    }
  }
  const replacements = replacementsOf(engrams);
  return engrams.flatMap((e) => notesOfEngram(e, carriers.get(e.engram_id), replacements));
}

export interface RecallResult {
  query: string;
  catalog_hash: string;
  hits: RecallHit[];
  /** The tokens the hits' text holds, within `max_tokens` when one was given. */
  tokens: number;
  max_tokens: number | null;
  /** The recall was sent as a promotion signal (false with --no-signal, no hits, or a bus that refused it). */
  signal: boolean;
}

export interface RecallMemoryOptions {
  limit?: number | undefined;
  /** Only these scopes (st, lt, history); default all. */
  scopes?: readonly RecallScope[] | undefined;
  /** Most tokens of text in the hits (none by default). */
  maxTokens?: number | undefined;
  signal: boolean;
  worker?: string | undefined;
  /** Also the ST copies of notes an LT engram carried forward (hidden by default). */
  includeSuperseded?: boolean | undefined;
}

export async function recallMemory(
  ctx: RepoContext,
  query: string,
  options: RecallMemoryOptions,
): Promise<RecallResult> {
  const catalog = await readCatalog(ctx.repoDir);
  const index = await recallIndexFor(ctx, catalog);
  return recallIn(ctx, { catalog, index }, query, options);
}

/** The memory a recall reads: the catalog's notes, and the history when it is searched. */
export interface LoadedRecall {
  catalog: Catalog;
  index: RecallIndex;
  /** The history index; read from git when absent and the history scope is searched. */
  history?: RecallIndex | undefined;
}

/** A recall over an index already loaded (a long-lived server keeps it between queries). */
export async function recallIn(
  ctx: RepoContext,
  loaded: LoadedRecall,
  query: string,
  options: RecallMemoryOptions,
): Promise<RecallResult> {
  const { catalog, index } = loaded;
  const scopes = options.scopes;
  const wantHistory = scopes === undefined || scopes.includes("history");
  const history = wantHistory ? (loaded.history ?? (await historyIndexFor(ctx))) : undefined;
  const hits = recall(history ? [index, history] : [index], query, {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(scopes !== undefined ? { scopes } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    includeSuperseded: options.includeSuperseded === true,
  });
  let signal = false;
  if (options.signal && hits.length > 0) {
    // Recalls count towards an engram's promotion; a session's knowledge is not promoted.
    const engramHits = [
      ...new Set(hits.flatMap((h) => (h.engram_id !== undefined ? [h.engram_id] : []))),
    ];
    if (engramHits.length > 0) signal = await recordRecall(ctx, query, engramHits, options.worker);
  }
  const tokens = hits.reduce((n, h) => n + h.tokens, 0);
  return {
    query,
    catalog_hash: catalog.hash,
    hits,
    tokens,
    max_tokens: options.maxTokens ?? null,
    signal,
  };
}

/**
 * Sends a recall as a promotion signal over the worker's bus (`ENGRAM_BUS`, else
 * `[worker] bus`, else the spool), as `worker emit` sends a note: a transient failure spools
 * it. The signal never costs the answer: a bus that refuses it (an unknown remote, a refused
 * credential) is said on stderr and the recall stands, with nothing spooled.
 */
export async function recordRecall(
  ctx: RepoContext,
  query: string,
  hits: string[],
  worker: string | undefined,
): Promise<boolean> {
  const { workerBus } = await import("../bus/worker-bus.js");
  try {
    await sendEnvelope(
      ctx,
      "memory_event.v1",
      { kind: "recall", query: query.slice(0, 1000), hits },
      { worker },
      workerBus(ctx, undefined).url,
    );
    return true;
  } catch (err) {
    if (!(err instanceof EngramError)) throw err;
    ctx.caller?.notice(`warning: the recall signal was not sent: ${err.message}`);
    return false;
  }
}
