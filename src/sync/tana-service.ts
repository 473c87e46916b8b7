import { basename } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { entityMatcher } from "../core/graph/entities.js";
import { learningsOf } from "../core/graph/learnings.js";
import type { PlacedLearning } from "../core/graph/lifecycle.js";
import { withoutReplaced } from "../core/graph/supersession.js";
import { canonicalJson, sha256Hex } from "../core/model/canonical.js";
import type { SyncCandidate } from "../core/sync/item.js";
import { itemKey } from "../core/sync/item.js";
import { learningCandidates, learningStates, placedStates } from "../core/sync/learning-items.js";
import { LEARNING_SYNC_TYPES } from "../core/sync/policy.js";
import { forgetSent, type MappingEntry } from "../core/sync/queue.js";
import { UsageError } from "../errors.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import { EMPTY_REGISTRY } from "../schema/empty-registry.js";
import type { Engram } from "../schema/engram.js";
import type { Registry } from "../schema/registry.js";
import { runSync, type SyncRunResult } from "./engine.js";
import type { QueueStore, StoredQueue } from "./queue-store.js";
import { engineSettings, lockSync, queueStore, syncLog } from "./service.js";
import { openTanaTarget } from "./tana-open.js";
import { SCHEMA_PREFIX, schemaRecord } from "./targets/tana-schema.js";
import type { TanaTarget } from "./targets/tana-target.js";
import type { SchemaReport } from "./targets/target.js";

/** Learning states as git and GitHub decide them (`worker learnings`), passed in by the caller. */
export interface PlacedLearnings {
  placed: readonly PlacedLearning[];
  /** The engrams stating them, by id (the branch's and pull requests' too). */
  engrams: ReadonlyMap<string, Engram>;
}

/**
 * The learning graph's candidates. With `learnings` (the states `worker learnings` lists):
 * confirmed learnings as learning nodes, proposed and rejected ones as proposal nodes (see
 * `placedStates`; `proposed` names the learnings whose proposal node exists). Without: from
 * memory on main, every learning confirmed. `hash` covers what was read, the registry and
 * the config: the same again builds nothing.
 */
export async function tanaSource(
  ctx: RepoContext,
  registry: Registry,
  learnings?: PlacedLearnings,
  proposed: ReadonlySet<string> = new Set(),
): Promise<{ hash: string; load: () => Promise<SyncCandidate[]> }> {
  const s = ctx.config.sync;
  const options = {
    default_privacy: s.default_privacy,
    default_confidence: s.default_confidence,
    project: s.project ?? basename(ctx.repoDir),
  };
  if (learnings !== undefined) {
    // Each learning's own words name its people and projects (an engram's entities are those
    // of all its notes): the links Tana gets are the learning's, as without states.
    const matcher = entityMatcher(registry);
    const placed = learnings.placed.map((p) => ({ ...p, learning: matcher.link(p.learning) }));
    const states = placedStates(placed, proposed);
    const hash = sha256Hex(
      canonicalJson({
        entries: learnings.placed.map((p) => p.entry),
        proposed: [...proposed].sort(),
        registry,
        tana: s.tana,
      }),
    );
    return {
      hash: `tana-states|${hash}`,
      load: async () => learningCandidates(states, learnings.engrams, options),
    };
  }
  const catalog = await readCatalog(ctx.repoDir);
  const load = async () => {
    const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
    const byId = new Map<string, Engram>([...engrams.values()].map((e) => [e.engram_id, e]));
    const matcher = entityMatcher(registry);
    const linked = learningsOf(withoutReplaced([...byId.values()])).map((l) => matcher.link(l));
    return learningCandidates(learningStates(linked), byId, options);
  };
  const hash = sha256Hex(canonicalJson({ catalog: catalog.hash, registry, tana: s.tana }));
  return { hash: `tana|${hash}`, load };
}

/** Learnings whose proposal node is mapped (and not archived): kept, `accepted` once confirmed. */
export function proposalNodes(mapping: Readonly<Record<string, MappingEntry>>): Set<string> {
  const out = new Set<string>();
  for (const [key, entry] of Object.entries(mapping)) {
    if (key.startsWith("proposal:") && !isArchived(entry)) out.add(key.slice("proposal:".length));
  }
  return out;
}

export interface TanaReport {
  schema: SchemaReport | null;
  /** Mapped keys whose node is gone from Tana (Local API listing). */
  stale: string[];
  /** Keys whose node was created again (`--resync`, or found gone on update). */
  recreated: string[];
  archived: { trashed: number; marked: number; gone: number };
  /** Entity links made, and skipped: no such node, more than one, the lookup failed. */
  links: { linked: number; unknown: number; ambiguous: number; failed: number };
}

/** What a Tana run reads beside memory: the registry and the learning states. */
export interface TanaInputs {
  /** People and projects to link (`config/registry.toml`, loaded by the caller). */
  registry?: Registry;
  /** Learning states (`worker learnings`); without, every learning on main is confirmed. */
  learnings?: PlacedLearnings;
}

/** The candidates a Tana run would build now, read from the queue's mapping (dry runs). */
export async function tanaCandidates(
  ctx: RepoContext,
  q: StoredQueue,
  inputs: TanaInputs,
): Promise<{ candidates: SyncCandidate[]; markdown: null }> {
  const registry = inputs.registry ?? EMPTY_REGISTRY;
  const source = await tanaSource(ctx, registry, inputs.learnings, proposalNodes(q.mapping));
  return { candidates: await source.load(), markdown: null };
}

/** Mapped nodes whose learning left memory: a run trashes or marks them archived. */
export function tanaRemovals(
  mapping: Readonly<Record<string, MappingEntry>>,
  current: ReadonlySet<string>,
): { key: string; title: string; action: "remove"; file: null; parts: null }[] {
  return removedKeys(mapping, current).map(([key, m]) => ({
    key,
    title: `node ${m.remote_id}`,
    action: "remove",
    file: null,
    parts: null,
  }));
}

function removedKeys(
  mapping: Readonly<Record<string, MappingEntry>>,
  current: ReadonlySet<string>,
): [string, MappingEntry][] {
  return Object.entries(mapping).filter(
    ([key, m]) =>
      isItemKey(key) && !key.startsWith(SCHEMA_PREFIX) && !isArchived(m) && !current.has(key),
  );
}

export interface TanaRunRequest extends TanaInputs {
  force?: boolean;
  /** Send every learning and proposal again, updating their nodes in place (`--all`). */
  all?: boolean;
  resync?: boolean;
  ids?: readonly string[];
  progress?: (done: number, total: number) => void;
}

const isItemKey = (key: string) =>
  (LEARNING_SYNC_TYPES as readonly string[]).includes(key.slice(0, key.indexOf(":")));
const isArchived = (entry: MappingEntry) => entry.content_hash.startsWith("archived:");

function recordSchema(store: QueueStore, q: StoredQueue, target: TanaTarget): StoredQueue {
  const ids = target.schemaIds;
  if (ids === null) return q;
  // The store's queue, not `q`: the init recorded its progress there as it went.
  const current = store.load();
  const entries = schemaRecord(ids, target.tagNames, receiptTime(), current.mapping);
  const next = { ...current, mapping: { ...current.mapping, ...entries } };
  store.commit(next, Object.keys(entries));
  return next;
}

/** `director sync init --target tana`: the supertags and fields, their ids in the mapping. */
export async function tanaInit(ctx: RepoContext): Promise<SchemaReport> {
  const lock = await lockSync(ctx);
  try {
    const store = queueStore(ctx, "tana");
    const q = store.load();
    const target = openTanaTarget(ctx, q.mapping, EMPTY_REGISTRY, store);
    await target.health();
    const report = await target.ensureSchema();
    recordSchema(store, q, target);
    return report;
  } finally {
    lock.release();
  }
}

/**
 * `director sync run --target tana`: the supertags first when they are not recorded (a sync
 * runs init when needed), stale mappings found through the Local API and, with `resync`,
 * created again; then the engine's run; then nodes of learnings that left memory trashed or
 * marked archived. `from` replaces memory as the source (tests, other callers).
 */
export async function tanaRun(
  ctx: RepoContext,
  request: TanaRunRequest,
  from?: { hash: string; load: () => Promise<SyncCandidate[]> },
): Promise<SyncRunResult & { tana: TanaReport }> {
  const lock = await lockSync(ctx);
  try {
    const store = queueStore(ctx, "tana");
    let q = store.load();
    const registry = request.registry ?? EMPTY_REGISTRY;
    const target = openTanaTarget(ctx, q.mapping, registry, store);
    const report: TanaReport = {
      schema: null,
      stale: [],
      recreated: [],
      archived: { trashed: 0, marked: 0, gone: 0 },
      links: target.links,
    };
    const health = await target.health();
    if (health.healthy && target.schemaIds === null) {
      report.schema = await target.ensureSchema();
      q = recordSchema(store, q, target);
    }
    let live: Awaited<ReturnType<TanaTarget["liveNodes"]>> = null;
    try {
      live = health.healthy ? await target.liveNodes() : null;
    } catch (error) {
      target.notes.push(`tana: stale nodes not checked (${(error as Error).message})`);
    }
    if (live !== null) {
      const liveIds = new Set(live.keys());
      // Missing from the listing: gone, unless written moments ago (the search index lags)
      // and still there when read by id.
      for (const [key, m] of Object.entries(q.mapping)) {
        if (!isItemKey(key) || isArchived(m) || liveIds.has(m.remote_id)) continue;
        if (await target.isGone(m.remote_id)) report.stale.push(key);
      }
      report.stale.sort();
    }
    if (request.resync === true && report.stale.length > 0) {
      // A changed hash re-queues the item as an update; the update finds the node gone and
      // creates it again, and the new id replaces the stale one.
      const mapping = { ...q.mapping };
      for (const key of report.stale) {
        mapping[key] = { ...(mapping[key] as MappingEntry), content_hash: "stale" };
      }
      const records = { ...q.records };
      const queued = report.stale.filter((k) => records[k] !== undefined);
      for (const key of queued) delete records[key];
      q = { ...q, mapping, records, source_hash: null };
      store.commit(q, report.stale, queued);
    }

    const source =
      from ?? (await tanaSource(ctx, registry, request.learnings, proposalNodes(q.mapping)));
    let built = null as SyncCandidate[] | null;
    let only: Set<string> | undefined;
    const ids = request.ids ?? [];
    const load = async () => {
      built = await source.load();
      return built;
    };
    if (ids.length > 0) {
      const all = await load();
      only = new Set();
      for (const id of ids) {
        const hit = all.find((c) => c.item.local_id === id || itemKey(c.item) === id);
        if (hit === undefined)
          throw new UsageError(`--id ${id}: no learning or proposal has this id`);
        only.add(itemKey(hit.item));
      }
    }
    const resend = request.all === true && ids.length === 0;
    if (resend) {
      // Forgotten hashes, kept node ids: every item is due again as an update in place.
      const keys = (await load()).map((c) => itemKey(c.item));
      store.commit(forgetSent(store.load(), keys), keys);
    }
    const result = await runSync(load, {
      store,
      target,
      ...engineSettings(ctx),
      force: request.force === true,
      ...(only ? { only } : {}),
      ...(request.resync === true || ids.length > 0 || resend ? {} : { sourceHash: source.hash }),
      ...(request.progress ? { progress: request.progress } : {}),
    });
    const notices = [...result.notices];
    if (built !== null && result.mode === "online" && ids.length === 0) {
      const failed = await archiveRemoved(store, target, built, report);
      if (failed !== null) notices.push(failed);
    }
    report.recreated = [...target.recreated];
    notices.push(...target.notes, ...target.linkNotes());
    logLinkSkips(ctx, target);
    const relink = relinkLater(store, target);
    if (relink !== null) notices.push(relink);
    if (report.stale.length > 0 && request.resync !== true) {
      notices.push(
        `tana: ${report.stale.length} mapping(s) point at nodes gone from Tana (workspace reset or deleted); director sync run --target tana --resync creates them again`,
      );
    }
    return { ...result, notices, tana: report };
  } finally {
    lock.release();
  }
}

/**
 * Items written without a link because its lookup failed (not because the entity has no
 * node): their sent hash is forgotten, so the next run updates them in place and links them.
 */
function relinkLater(store: QueueStore, target: TanaTarget): string | null {
  const failed = new Set(
    target.linker.skips.filter((s) => s.status === "failed").map((s) => s.key),
  );
  const q = store.load();
  const keys = [...failed].filter((k) => q.mapping[k] !== undefined).sort();
  if (keys.length === 0) return null;
  store.commit({ ...forgetSent(q, keys), source_hash: null }, keys);
  return `tana: ${keys.length} item(s) went without a link (lookup failed); the next run updates them to link`;
}

/** Each entity left unlinked goes to the sync log with its item and why. */
function logLinkSkips(ctx: RepoContext, target: TanaTarget): void {
  const at = receiptTime();
  syncLog(ctx).append(
    target.linker.skips.map((s) => ({
      at,
      target: "tana",
      op: "notice" as const,
      key: s.key,
      ok: false,
      error: `${s.entity} not linked: ${s.reason}`,
      detail: { entity: s.entity, link: s.status },
    })),
  );
}

/** Nodes of learnings memory no longer has: trashed (Local API) or marked archived. */
async function archiveRemoved(
  store: QueueStore,
  target: TanaTarget,
  built: readonly SyncCandidate[],
  report: TanaReport,
): Promise<string | null> {
  let q = store.load();
  const removed = removedKeys(q.mapping, new Set(built.map((c) => itemKey(c.item))));
  for (const [key, entry] of removed) {
    let how: "trashed" | "marked" | "gone";
    try {
      how = await target.archive(entry.remote_id);
    } catch (error) {
      // The next run reads memory again (no source hash) and archives what is left.
      q = { ...q, source_hash: null };
      store.commit(q, []);
      return `tana: archiving ${key} failed (${(error as Error).message}); the next run tries again`;
    }
    report.archived[how]++;
    q = {
      ...q,
      mapping: { ...q.mapping, [key]: { ...entry, content_hash: `archived:${receiptTime()}` } },
    };
    store.commit(q, [key]);
  }
  return null;
}

/** One line for the terminal: what the Tana run did beyond sending. */
export function tanaSummary(r: TanaReport): string {
  const schema = r.schema ? `; supertags created ${r.schema.created.join(", ") || "none"}` : "";
  return `links ${r.links.linked} (not found ${r.links.unknown}, ambiguous ${r.links.ambiguous}, lookups failed ${r.links.failed}); stale ${r.stale.length}, recreated ${r.recreated.length}; archived ${r.archived.trashed} trashed, ${r.archived.marked} marked${schema}`;
}
