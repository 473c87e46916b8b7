import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import {
  checkedEngramNotes,
  type EngramNotes,
  engramNotesOf,
  memoryNotesOf,
} from "../core/recall/engram-notes.js";
import {
  noteOfKnowledge,
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
import type { Catalog, CatalogEntry, Engram } from "../schema/engram.js";
import { readCacheFile, writeCacheFile } from "../state/cache-file.js";
import { sendEnvelope } from "./emit.js";
import { historyIndexFor } from "./history-index.js";
import { counted } from "./note-tokens.js";

interface CachedIndex {
  catalog_hash: string;
  index: SerializedRecallIndex;
}

const NOTES_FORMAT = "engram-recall-notes/v1";

/** Where a cache keeps what each engram gave (`recall-index.json` -> `recall-index.notes.json`). */
function notesCachePath(cachePath: string): string {
  return cachePath.replace(/\.json$/, "") + ".notes.json";
}

/**
 * The recall index of a catalog's notes, cached built in the state folder by catalog hash:
 * a query loads one file instead of reading and tokenizing every engram. When memory
 * changes, the index is rebuilt incrementally: each engram's notes are kept beside it (by
 * engram hash), so only the engrams whose hash changed are read, tokenized and counted
 * again, and removed ones drop out; the result is the same bytes as a build from nothing.
 * Both files are written atomically and read as untrusted input: whatever fails its checks
 * is derived again from memory.
 */
export async function recallIndexFor(
  ctx: RepoContext,
  catalog: Catalog,
  source: {
    /** Where the index is cached (default: the work tree's cache). */
    cacheName?: string;
    /** The listed engrams, when not the work tree's (a session reads its parent version's). */
    load?: (entries: readonly CatalogEntry[]) => Promise<Map<string, Engram>>;
    /** The sessions' knowledge, when not the work tree's. */
    knowledge?: () => Promise<RecallKnowledge[]>;
  } = {},
): Promise<RecallIndex> {
  const cachePath = join(ctx.paths.root, source.cacheName ?? "recall-index.json");
  const cached = parsed(await readCacheFile(cachePath)) as Partial<CachedIndex> | undefined;
  if (cached?.catalog_hash === catalog.hash) {
    const index = deserializeRecallIndex(cached.index);
    if (index) return index;
  }
  const notesPath = notesCachePath(cachePath);
  const kept = parsed(await readCacheFile(notesPath)) as { format?: unknown; engrams?: unknown };
  const before = new Map<string, unknown>();
  if (kept?.format === NOTES_FORMAT && Array.isArray(kept.engrams)) {
    for (const part of kept.engrams as { engram_id?: unknown }[]) {
      if (typeof part?.engram_id === "string") before.set(part.engram_id, part);
    }
  }
  const parts = new Map<string, EngramNotes>();
  const stale: CatalogEntry[] = [];
  for (const entry of catalog.entries) {
    const part = checkedEngramNotes(before.get(entry.engram_id), entry);
    if (part) parts.set(entry.engram_id, part);
    else stale.push(entry);
  }
  if (stale.length > 0) {
    const engrams = source.load ? await source.load(stale) : await loadEngrams(ctx.repoDir, stale);
    for (const [id, engram] of engrams) parts.set(id, engramNotesOf(engram, counted));
  }
  const listed = catalog.entries.flatMap((e) => parts.get(e.engram_id) ?? []);
  const notes = memoryNotesOf(listed);
  const knowledge = source.knowledge
    ? await source.knowledge()
    : await readKnowledge(ctx.repoDir, catalog);
  for (const k of knowledge) notes.push(noteOfKnowledge(k));
  const index = buildRecallIndex(counted(notes));
  // The parts first: a crash between the two leaves an index keyed by the old catalog.
  writeCacheFile(notesPath, JSON.stringify({ format: NOTES_FORMAT, engrams: listed }));
  const cache: CachedIndex = { catalog_hash: catalog.hash, index: serializeRecallIndex(index) };
  writeCacheFile(cachePath, JSON.stringify(cache));
  return index;
}

function parsed(text: string): unknown {
  try {
    return text === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined; // a damaged cache is derived again
  }
}

/**
 * The notes of the listed engrams. An ST note is superseded only by an LT engram that names
 * its engram in `supersedes` and carries that very note: what promotion left behind stays.
 */
export function memoryNotes(engrams: readonly Engram[]): RecallNote[] {
  return memoryNotesOf(engrams.map((e) => engramNotesOf(e, (notes) => [...notes])));
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
