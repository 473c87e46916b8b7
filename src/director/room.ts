import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { decideCompaction, tallyRecalls } from "../core/compaction/decide.js";
import { planRoomCompaction, roomLinker } from "../core/compaction/room.js";
import { emptyLedger, pendingFileName, serializeLedger } from "../core/compaction/room-ledger.js";
import { parseVersionLog, VERSION_LOG_PATH } from "../core/versions/log.js";
import { StateError } from "../errors.js";
import { commitTimes } from "../git/rev-reads.js";
import { loadRegistry } from "../graph/registry.js";
import { readCatalog, readTextIfExists } from "../repo/memory-tree.js";
import type { MemoryConfig } from "../schema/config.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import {
  type EventBuffer,
  holdsSessionEnd,
  journalLineBytes,
  type SerializedEvent,
} from "../state/buffer.js";
import { type CycleIntent, finishCycle, writeIntent } from "./cycle-intent.js";
import { readRoomLedger, roomDir } from "./room-ledger.js";
import { rememberPending } from "./room-pending.js";
import { readStagingMeta, stagingDir } from "./staging.js";

/**
 * Whether this repository publishes memory by pull request (`memory.publish`): then what an
 * ingest compacts for room waits in the state folder for the next `director run --pr`.
 * `auto` says yes when anything says pull requests: a `run --pr` ran with this state folder
 * (it has a staging tree), the repository has the engram branch (locally or from `origin`),
 * `github.repository` is configured, or the environment names a GitHub repository
 * (`GITHUB_REPOSITORY`) or is GitHub Actions (`GITHUB_ACTIONS=true`).
 */
export async function publishesByPullRequest(
  ctx: RepoContext,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const mode = ctx.config.memory.publish;
  if (mode !== "auto") return mode === "pull-request";
  if (existsSync(join(ctx.paths.root, "staging.json"))) return true;
  if (ctx.config.github.repository !== undefined) return true;
  if ((env.GITHUB_REPOSITORY ?? "").trim() !== "" || env.GITHUB_ACTIONS === "true") return true;
  const branch = ctx.config.github.head_branch;
  const found = await commitTimes(ctx.repoDir, [
    `refs/heads/${branch}`,
    `refs/remotes/origin/${branch}`,
  ]);
  return found?.some((c) => c !== undefined) ?? false;
}

/**
 * Makes room in the buffer for `incoming` before an ingest would take it past its hard
 * budgets: the oldest slice, down to the low-water mark, becomes engrams in the state folder
 * (one pending file and the ledger, through the crash-safe intent), and leaves the buffer.
 * No memory tree is written and no catalog is read: the next cycle takes these engrams into
 * the tree the repository publishes (see `settleRoom`), with one catalog and MEMORY.md for
 * all of them. Ended sessions are consolidated first in a work tree, as before; with pull
 * requests (`pullRequest`: the caller is `director run --pr`), their consolidation is the
 * next `run --pr` cycle's, so the slice stops before them.
 */
export async function compactForRoom(
  ctx: RepoContext,
  buffer: EventBuffer,
  incoming: SerializedEvent,
  pullRequest = false,
): Promise<void> {
  buffer.loadEvents();
  const memory = ctx.config.memory;
  const byPullRequest = !holdsSessionEnd(buffer)
    ? undefined
    : pullRequest || (await publishesByPullRequest(ctx));
  if (byPullRequest === false) {
    await (await import("./consolidate.js")).consolidateEndedSessions(ctx, buffer);
  }
  const now = receiptTime();
  let take = roomTake(buffer, journalLineBytes(incoming.body, buffer.meta.last_seq + 1), memory);
  if (byPullRequest === true) {
    const end = await firstUnconsolidatedEnd(ctx, buffer);
    if (end !== -1 && end < take) take = end;
    if (take === 0) {
      throw new StateError(
        `the buffer is full up to an ended session that director run --pr consolidates (memory.publish: pull request): run director run --pr, or raise memory.buffer_max_events (${memory.buffer_max_events}) / memory.buffer_max_bytes (${memory.buffer_max_bytes})`,
      );
    }
  }
  // Nothing to take: the caller reports that no room could be made.
  if (take === 0) return;
  const takenEvents = buffer.events.slice(0, take).map((s) => s.event);
  const slice = (await import("./journal-redact.js")).redactedEvents(
    ctx,
    takenEvents,
    buffer.heldAtOpen,
  );
  const ledger = readRoomLedger(ctx.paths) ?? emptyLedger();
  const pendingFile = pendingFileName(ledger);
  const plan = planRoomCompaction({
    slice,
    memory,
    entities: linkerFor(ctx, buffer),
    ledger,
    pendingFile,
  });
  const recalls = tallyRecalls(slice, new Map(Object.entries(buffer.meta.recall_counts)));
  const recallCounts: Record<string, number> = {};
  for (const id of [...recalls.keys()].sort()) recallCounts[id] = recalls.get(id) as number;
  // The ledger travels as the intent's `room`, not as a write: an intent writes only memory
  // files, and that is checked when it is read back (a restored state folder is content).
  const intent: CycleIntent = {
    // Lines set aside are dropped with the rest of the slice.
    through_seq: takenEvents[takenEvents.length - 1]?.seq as number,
    writes: [],
    deletes: [],
    room: { ledger: serializeLedger(plan.ledger) },
    meta: {
      last_compaction_at: now,
      recall_counts: recallCounts,
      compacted_events: buffer.meta.compacted_events + slice.length,
    },
  };
  // The engrams first, durably, outside the intent: no ledger names the file until the
  // intent's does, so a crash before it leaves a file the next compaction writes again.
  mkdirSync(roomDir(ctx.paths), { recursive: true });
  const made = plan.engrams.length + plan.groups.length > 0;
  if (made) writeFileAtomicSync(join(roomDir(ctx.paths), pendingFile), plan.pendingText);
  writeIntent(ctx.paths.intent, intent);
  await finishCycle(ctx, buffer, intent);
  const last = plan.ledger.pending[plan.ledger.pending.length - 1];
  if (made && last !== undefined) {
    // Its records, not its text: the cycle that takes them in this process reads no file.
    rememberPending(join(roomDir(ctx.paths), last.file), last.sha256, {
      engrams: plan.engrams,
      groups: plan.groups,
    });
  }
}

/**
 * One entity linker for every compaction for room of a buffer's life (one command): the
 * registry is read once, as a cycle reads it, and each fact or decision is linked once, not
 * once per slice that holds it again. Linking is pure, so the engrams are the same bytes.
 */
const linkers = new WeakMap<EventBuffer, ReturnType<typeof roomLinker>>();

function linkerFor(ctx: RepoContext, buffer: EventBuffer): ReturnType<typeof roomLinker> {
  if (!linkers.has(buffer)) linkers.set(buffer, roomLinker(loadRegistry(ctx.repoDir)));
  return linkers.get(buffer);
}

/**
 * How many of the oldest events to take: the hard-limit decision with the incoming event
 * counted in (it takes the buffer past a budget), never the incoming event itself.
 */
function roomTake(buffer: EventBuffer, incomingBytes: number, memory: MemoryConfig): number {
  const eventBytes = buffer.events.map((s) => s.bytes);
  const count = eventBytes.length;
  eventBytes.push(incomingBytes);
  const decision = decideCompaction(
    { eventBytes, totalBytes: buffer.totalBytes + incomingBytes },
    memory,
    undefined,
    // Only the hard limit matters here: no rate limit, so the time is not read.
    "",
    false,
  );
  return Math.min(decision.take, count);
}

/**
 * At the end of a command that ingested (`director ingest`, the hub), in a repository that
 * publishes in its work tree: the engrams compacted for room are written there now, with one
 * catalog and MEMORY.md for all of them, as before. With pull requests they stay staged for
 * the next `director run --pr`.
 */
export async function settleRoom(ctx: RepoContext, buffer: EventBuffer): Promise<void> {
  const ledger = readRoomLedger(ctx.paths);
  if (ledger === undefined || ledger.pending.length === 0) return;
  if (await publishesByPullRequest(ctx)) return;
  const { settleCycle } = await import("./cycle.js");
  await settleCycle(ctx, buffer);
}

/**
 * The buffer index of the first part of an ended session that the staging tree of
 * `director run --pr` does not hold yet (-1: none): its version log or documents name the
 * sessions it holds, as consolidation reads them. Without a staging tree, none is held.
 */
async function firstUnconsolidatedEnd(ctx: RepoContext, buffer: EventBuffer): Promise<number> {
  const held = new Set<string>();
  const meta = readStagingMeta(ctx.paths);
  const dir = meta === undefined ? undefined : stagingDir(ctx.paths, meta);
  if (dir !== undefined && existsSync(dir)) {
    const log = await readTextIfExists(join(dir, VERSION_LOG_PATH));
    for (const r of log === undefined ? [] : parseVersionLog(log)) {
      if (r.made_by.kind === "session") held.add(r.made_by.session_id);
    }
    for (const d of (await readCatalog(dir)).documents ?? []) {
      if (d.kind === "session")
        held.add(d.path.slice(d.path.lastIndexOf("/") + 1, -".json".length));
    }
  }
  return buffer.events.findIndex(
    (s) =>
      s.event.type === "session_end.v1" &&
      s.event.session !== undefined &&
      !held.has(s.event.session.session_id),
  );
}
