/**
 * The Director's cycle for a caller that holds the Director state (its lock and buffer):
 * drain, consolidate ended sessions, compact, promote, evict, write the catalog and MEMORY.md.
 * run.ts takes the state for it; room.ts settles with it.
 */
import { relative } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { overBudget, type TierUsage } from "../core/compaction/budget.js";
import { type CatalogSummary, summarizeCatalog } from "../core/compaction/catalog-summary.js";
import {
  type CompactionDecision,
  type CompactionReason,
  decideCompaction,
  explainNoCompaction,
  isIdleCycle,
  type NotCompacted,
  tallyRecalls,
} from "../core/compaction/decide.js";
import { type RoomLedger, type RoomReport, roomReport } from "../core/compaction/room-ledger.js";
import { isHistoryEvent } from "../core/history/kinds.js";
import { CATALOG_PATH, engramPath, FOCUS_PATH } from "../core/model/paths.js";
import { parseFocusMarker } from "../core/rendering/focus-header.js";
import { nowLines, summarizeSwarm } from "../core/swarm/swarm.js";
import { type SourceDrain, zeroCounts } from "../ingest/counts.js";
import { assertCatalogSealed } from "../repo/catalog-seal.js";
import { readCatalogSummary, writeCatalogSummary } from "../repo/catalog-summary.js";
import { readConfinedText } from "../repo/confine.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Snapshot } from "../repo/version-snapshots.js";
import type { MemoryConfig } from "../schema/config.js";
import type { Catalog, Engram } from "../schema/engram.js";
import type { Registry } from "../schema/registry.js";
import { type EventBuffer, holdsSessionEnd } from "../state/buffer.js";
import type { SetAsideLine } from "../state/journal-set-aside.js";
import type { SessionStepReport } from "./consolidate.js";
import { type CycleIntent, commitCycle } from "./cycle-intent.js";
import { judgeFocus, lastNow, rememberFocus } from "./focus-fresh.js";
import { readRoomLedger, settledLedgerText } from "./room-ledger.js";
import { drainSpool, type SpoolDrain } from "./spool-drain.js";

/**
 * Takes the engrams compacted for room into the work tree now (the end of an ingest in a
 * repository that publishes there): a cycle that compacts nothing more from the buffer.
 */
export async function settleCycle(ctx: RepoContext, buffer: EventBuffer): Promise<RunResult> {
  buffer.loadEvents();
  const intake = { drained: { ...zeroCounts(), files: 0, set_aside: [] }, sources: [] };
  return cycle(ctx, buffer, intake, { settle: true });
}

export interface RunOptions {
  /** Compact everything but the newest window, ignoring the soft limit and rate limit. */
  force?: boolean;
  /** Compact the whole buffer, the newest window too (the end of a CI job or a session). */
  flush?: boolean;
  /** Plan and report, write nothing (the spool is still drained into the buffer). */
  dryRun?: boolean;
  /** Drains the networked bus sources after the spool (`agent_bus.sources`; the CLI wires it). */
  drainSources?: (ctx: RepoContext, buffer: EventBuffer) => Promise<SourceDrain[]>;
  /** With `dryRun`: given the files the cycle would write and delete (not called when idle). */
  onDryRun?: (plan: CyclePlanFiles) => void;
  /** The registry engrams link to; read from the repository when absent. */
  registry?: Registry;
  /** The repository version snapshots go to (default: the memory tree's own). */
  gitDir?: string;
}

/** What a planned cycle would do to the memory tree. */
export interface CyclePlanFiles {
  writes: readonly { path: string; text: string }[];
  deletes: readonly string[];
  catalog: Catalog;
}

interface CycleOptions extends RunOptions {
  /** Only take the engrams compacted for room into the tree: no event leaves the buffer. */
  settle?: boolean;
}

export interface RunResult {
  catalog_version: number;
  catalog_hash: string;
  changed: boolean;
  engrams_written: number;
  engrams_evicted: number;
  engrams_promoted: number;
  compacted_events: number;
  compaction: CompactionReason;
  /** Why nothing was compacted, with what would compact now; null when events were compacted. */
  not_compacted: NotCompacted | null;
  drained: SpoolDrain;
  /** The networked sources of `agent_bus.sources`, drained after the spool. */
  sources: SourceDrain[];
  buffer: { events: number; bytes: number };
  tiers: { st: TierUsage; lt: TierUsage };
  focus: { bytes: number; items: number; omitted: number } | null;
  written: string[];
  evicted: string[];
  dry_run: boolean;
  /** Ended sessions consolidated before the cycle, one version each, in the order they ended. */
  sessions?: SessionStepReport[];
  /** Mentions in the new engrams that name no one in the registry: logged, not linked. */
  unlinked_mentions?: string[];
  /** The snapshot of the version this cycle made (absent when it made none or outside git). */
  snapshot?: Snapshot;
  /** MEMORY.md was not what the Director generates (edited by hand): its first differing line. */
  focus_rewritten?: string;
  /**
   * What ingests compacted for room since the last run (null: nothing): their engrams are
   * written by this cycle (counted in `engrams_written`) unless `written_by_ingest` already
   * wrote them to the work tree.
   */
  compacted_for_room: RoomReport | null;
  /**
   * Journal lines set aside when the buffer was opened, as no buffered event (a restored or
   * edited state folder's): never loaded, moved to `buffer/set-aside/`. Absent when none.
   */
  journal_set_aside?: SetAsideLine[];
}

/** One cycle for a caller that already holds the Director state (the TCP hub between cycles). */
export async function runCycleOn(
  ctx: RepoContext,
  buffer: EventBuffer,
  options: RunOptions = {},
): Promise<RunResult> {
  const drained = await drainSpool(ctx, buffer);
  const sources = options.drainSources ? await options.drainSources(ctx, buffer) : [];
  const sessions = options.dryRun ? [] : await consolidateSessions(ctx, buffer);
  const result = await cycle(ctx, buffer, { drained, sources }, options);
  // A consolidated session is a catalog change even when the cycle after it has nothing to do.
  const changed = result.changed || sessions.length > 0;
  if (buffer.setAside.length === 0) return { ...result, changed, sessions };
  const journal_set_aside = buffer.setAside.map((l) => ({
    ...l,
    file: relative(ctx.repoDir, l.file),
    moved_to: l.moved_to === null ? null : relative(ctx.repoDir, l.moved_to),
  }));
  return { ...result, changed, sessions, journal_set_aside };
}

/**
 * Consolidates the ended sessions the buffer holds. The version machinery is loaded only when
 * the buffer holds a session's end: a run without one pays none of its start-up.
 */
async function consolidateSessions(
  ctx: RepoContext,
  buffer: EventBuffer,
): Promise<SessionStepReport[]> {
  if (!holdsSessionEnd(buffer)) return [];
  assertCatalogSealed(await readCatalog(ctx.repoDir));
  return (await import("./consolidate.js")).consolidateEndedSessions(ctx, buffer);
}

async function cycle(
  ctx: RepoContext,
  buffer: EventBuffer,
  intake: Pick<RunResult, "drained" | "sources">,
  options: CycleOptions,
): Promise<RunResult> {
  const memory = ctx.config.memory;
  // The summary first: an idle cycle never parses the catalog's entries.
  const read = await readCatalogSummary(ctx.repoDir, ctx.paths.catalogSummary);
  // Cached summaries are of catalogs a cycle wrote or checked: any other is checked first.
  if (!read.cached) assertCatalogSealed(await read.catalog());
  const head = read.summary;
  const now = receiptTime();
  const shape = {
    eventBytes: buffer.events.map((s) => s.bytes),
    totalBytes: buffer.totalBytes,
    historyThrough: buffer.events.findLastIndex((s) => isHistoryEvent(s.event)) + 1,
  };
  const last = buffer.meta.last_compaction_at;
  const force = options.force === true;
  const decision: CompactionDecision = options.settle
    ? { take: 0, reason: "none" }
    : decideCompaction(shape, memory, last, now, force, options.flush === true);
  // What ingests compacted for room: reported, and their engrams taken in, by this cycle.
  const ledger = readRoomLedger(ctx.paths);
  const room = ledger === undefined ? null : roomReport(ledger);
  const newSignals = buffer.events.some(
    (s) => s.event.kind === "recall" && s.event.seq > buffer.meta.recall_checked_seq,
  );
  const focusText = await readConfinedText(ctx.repoDir, FOCUS_PATH);
  const focusFresh =
    focusText !== undefined && parseFocusMarker(focusText)?.catalog_hash === head.hash;
  const cadence = focusCadence(buffer, memory);
  const idle =
    ledger === undefined &&
    isIdleCycle({
      take: decision.take,
      newSignals,
      focusFresh,
      overBudget: overBudget(head.tiers, memory),
      focusDue: cadence.due,
    });
  // Only a cycle with nothing else to do asks whether MEMORY.md was edited: any other
  // rewrites it anyway.
  const judged = idle
    ? await judgeFocus(ctx, read, focusText, lastNow(memory, buffer.meta.focus_now))
    : undefined;
  const base = {
    ...intake,
    compacted_for_room: room,
    compaction: decision.reason,
    not_compacted: explainNoCompaction(decision, shape, memory, last, now),
    dry_run: options.dryRun === true,
    ...(judged?.rewrite !== undefined ? { focus_rewritten: judged.rewrite } : {}),
  };
  if (judged?.fresh === true) {
    read.remember();
    return summarize(head, buffer, base, null);
  }

  const catalog = await read.catalog();
  // The engine, the focus view and the version log load only for a cycle with work.
  const [{ planCycle }, { loadFocusDocuments }, { nextVersion, snapshotNext }] = await Promise.all([
    import("../core/compaction/plan.js"),
    import("./consolidate.js"),
    import("./versions.js"),
  ]);
  const takenEvents = buffer.events.slice(0, decision.take).map((s) => s.event);
  const slice = (await import("./journal-redact.js")).redactedEvents(
    ctx,
    takenEvents,
    buffer.heldAtOpen,
  );
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  const recalls = new Map(Object.entries(buffer.meta.recall_counts));
  tallyRecalls(
    buffer.events.map((s) => s.event),
    recalls,
  );
  const asOf = maxIso(buffer.meta.last_received_at, catalog.created_at);
  const nowSection = nowFor(cadence, buffer, ctx.config.agent_bus.heartbeat_ttl_seconds, asOf);
  const documents = await loadFocusDocuments(ctx.repoDir, catalog);
  const registry =
    options.registry ?? (await import("../graph/registry.js")).loadRegistry(ctx.repoDir);
  // What compactions for room left, packed here with the registry this cycle links to.
  const taken =
    ledger === undefined
      ? { engrams: [], fromGroups: 0, supersedes: new Map<string, string[]>() }
      : (await import("./room-pending.js")).loadPendingEngrams(ctx.paths, ledger, memory, registry);
  const pending = taken.engrams;
  // The engrams of the groups' records count as made by the compactions that left them.
  if (base.compacted_for_room !== null) base.compacted_for_room.engrams += taken.fromGroups;
  const plan = planCycle({
    ...(documents !== undefined ? { documents } : {}),
    slice,
    pending,
    pendingSupersedes: taken.supersedes,
    catalog,
    engrams,
    recalls,
    memory,
    asOf,
    ...(nowSection !== undefined ? { now: nowSection } : {}),
    registry,
    lastBatch: buffer.meta.compacted_batch,
  });
  const planned = {
    ...base,
    changed: plan.catalogChanged,
    engrams_written: plan.written.length,
    engrams_evicted: plan.evicted.length,
    engrams_promoted: plan.promoted.length,
    compacted_events: plan.compactedEvents,
    written: plan.written.map((e) => engramPath(e.scope, e.version, e.engram_id)),
    evicted: plan.evicted.map((e) => e.path),
    ...(plan.unlinked.length > 0 ? { unlinked_mentions: plan.unlinked } : {}),
  };
  // A new catalog version gets its line in the version log, written with the catalog.
  const version = plan.catalogChanged
    ? await nextVersion(ctx.repoDir, plan.catalog, { kind: "cycle" })
    : undefined;
  const writes = version ? [...plan.writes, version.write] : plan.writes;
  if (options.dryRun) {
    options.onDryRun?.({ writes, deletes: plan.deletes, catalog: plan.catalog });
    return summarize(summarizeCatalog(plan.catalog), buffer, planned, plan.focus, slice.length);
  }
  const snapshot = version
    ? await snapshotNext(
        options.gitDir ?? ctx.repoDir,
        ctx.repoDir,
        version.record,
        { writes, deletes: plan.deletes },
        catalog.hash,
      )
    : null;

  const live = new Set(plan.catalog.entries.map((e) => e.engram_id));
  const persisted = tallyRecalls(slice, new Map(Object.entries(buffer.meta.recall_counts)));
  const recallCounts: Record<string, number> = {};
  for (const id of [...persisted.keys()].sort()) {
    if (live.has(id)) recallCounts[id] = persisted.get(id) as number;
  }
  const intent: CycleIntent = {
    // Lines set aside (`redactedEvents`) are dropped with the rest of the slice.
    through_seq: takenEvents[takenEvents.length - 1]?.seq ?? 0,
    writes,
    deletes: plan.deletes,
    ...(ledger === undefined
      ? {}
      : { room: { ledger: roomAfter(ledger, pending, taken.fromGroups, plan, options) } }),
    meta: {
      ...(slice.length > 0 ? { last_compaction_at: now } : {}),
      // With the files, in one intent: a run whose end is lost leaves the record as it was.
      ...(plan.batch !== undefined ? { compacted_batch: plan.batch } : {}),
      recall_counts: recallCounts,
      compacted_events: buffer.meta.compacted_events + slice.length,
      recall_checked_seq: buffer.meta.last_seq,
      ...(cadence.due ? { focus_heartbeat_seq: buffer.meta.last_seq } : {}),
      ...(nowSection !== undefined ? { focus_now: [...nowSection] } : {}),
    },
  };
  await commitCycle(ctx, buffer, intent);
  const after = summarizeCatalog(plan.catalog);
  const catalogText = writes.find((w) => w.path === CATALOG_PATH)?.text;
  if (catalogText !== undefined) writeCatalogSummary(ctx.paths.catalogSummary, catalogText, after);
  const focusWritten = writes.find((w) => w.path === FOCUS_PATH)?.text;
  if (focusWritten !== undefined) rememberFocus(ctx, after.hash, nowSection, focusWritten);
  return summarize(after, buffer, snapshot ? { ...planned, snapshot } : planned, plan.focus);
}

/**
 * The room ledger after this cycle: gone once a run reported it; after a settle, kept with
 * the engrams it wrote counted, for the next run to report.
 */
function roomAfter(
  ledger: RoomLedger,
  pending: readonly Engram[],
  fromGroups: number,
  plan: { written: readonly Engram[] },
  options: CycleOptions,
): string | null {
  if (!options.settle) return null;
  const ids = new Set(pending.map((e) => e.engram_id));
  return settledLedgerText(
    ledger,
    plan.written.filter((e) => ids.has(e.engram_id)).length,
    fromGroups,
  );
}

interface Cadence {
  mode: MemoryConfig["memory_md_update_cadence"];
  /** Enough heartbeats arrived since the last periodic render. */
  due: boolean;
}

/**
 * `memory_md_update_cadence`: MEMORY.md always follows the catalog it names (on_merge); with
 * periodic or hybrid it also carries a "Now" section of the live workers, rendered again
 * every `memory_md_update_every_n_heartbeats` heartbeats.
 */
function focusCadence(buffer: EventBuffer, memory: MemoryConfig): Cadence {
  const mode = memory.memory_md_update_cadence;
  if (mode === "on_merge") return { mode, due: false };
  const since = buffer.meta.focus_heartbeat_seq ?? 0;
  let beats = 0;
  for (const s of buffer.events) {
    if (s.event.kind === "heartbeat" && s.event.seq > since) beats++;
  }
  return { mode, due: beats >= memory.memory_md_update_every_n_heartbeats };
}

/**
 * The "Now" lines for this render: fresh when the periodic render is due (and, with hybrid,
 * at every render); periodic keeps the last ones at a catalog change, so merges alone do not
 * churn them. Liveness is judged at the cycle's receipt time, never by a clock.
 */
function nowFor(
  cadence: Cadence,
  buffer: EventBuffer,
  ttlSeconds: number,
  asOf: string,
): readonly string[] | undefined {
  if (cadence.mode === "on_merge") return undefined;
  if (!cadence.due && cadence.mode === "periodic") return buffer.meta.focus_now ?? [];
  const swarm = summarizeSwarm(
    buffer.events.map((s) => s.event),
    asOf,
    ttlSeconds,
    "",
  );
  return nowLines(swarm);
}

function maxIso(a: string | undefined, b: string): string {
  return a !== undefined && a > b ? a : b;
}

function summarize(
  catalog: CatalogSummary,
  buffer: EventBuffer,
  fields: Partial<RunResult> &
    Pick<RunResult, "drained" | "sources" | "compaction" | "not_compacted" | "dry_run">,
  focus: RunResult["focus"],
  pendingDrop = 0,
): RunResult {
  const dropped = buffer.events.slice(0, pendingDrop).reduce((sum, s) => sum + s.bytes, 0);
  return {
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    changed: false,
    engrams_written: 0,
    engrams_evicted: 0,
    engrams_promoted: 0,
    compacted_events: 0,
    written: [],
    evicted: [],
    compacted_for_room: null,
    ...fields,
    buffer: { events: buffer.count - pendingDrop, bytes: buffer.totalBytes - dropped },
    tiers: catalog.tiers,
    focus,
  };
}
