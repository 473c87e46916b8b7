import { join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import { countFocusItems, parseFocusMarker } from "../core/rendering/focus-header.js";
import type { DriftVerdict } from "../core/swarm/drift.js";
import { type SwarmView, summarizeSwarm } from "../core/swarm/swarm.js";
import { readCatalogSummary } from "../repo/catalog-summary.js";
import { readConfinedText } from "../repo/confine.js";
import { findMain, judgeAgainstMain } from "../repo/main-drift.js";
import type { Envelope } from "../schema/envelope.js";
import { ENVELOPE_SCHEMA_VERSION } from "../schema/message-types.js";
import { EventBuffer } from "../state/buffer.js";
import { readDropped, readQuarantine } from "../state/quarantine.js";
import { listSpoolFiles } from "../state/spool.js";
import { readSpoolRefusals, SPOOL_REFUSED_FILE, type SpoolRefusals } from "../state/spool-share.js";
import { readLiveness } from "./liveness-file.js";

export interface StatusReport {
  catalog: { version: number; hash: string; entries: number; created_at: string };
  buffer: {
    events: number;
    bytes: number;
    max_events: number;
    max_bytes: number;
    oldest?: string;
    newest?: string;
  };
  tiers: {
    st: { files: number; bytes: number; max_files: number; max_bytes: number };
    lt: { files: number; bytes: number; max_files: number; max_bytes: number };
  };
  focus: {
    present: boolean;
    fresh: boolean;
    bytes: number;
    items: number;
    max_bytes: number;
    max_items: number;
  };
  /**
   * Records (a run of alike lines is one), the lines they stand for, and what the disk budget
   * dropped (`[quarantine]`: lines and bytes of input, by the senders that lost most).
   */
  quarantine: {
    records: number;
    lines: number;
    by_reason: Record<string, number>;
    max_bytes: number;
    max_records: number;
    dropped: {
      lines: number;
      bytes: number;
      by_sender: Record<string, { lines: number; bytes: number }>;
    };
  };
  /** Files waiting, and the sends refused by sender since the last drain (their share was full). */
  spool: { files: number; refused: Record<string, SpoolRefusals> };
  last_compaction_at: string | null;
  compacted_events: number;
  /**
   * Workers and their errors, from the events still in the buffer and the sightings that
   * compactions kept (`buffer/liveness.json`): a compaction does not make a live worker vanish.
   * `liveness_problems` names what of that record was left out as malformed.
   */
  swarm: Omit<SwarmView, "workers"> & {
    workers: (SwarmView["workers"][number] & { drift: WorkerDrift | null })[];
    liveness_problems: string[];
  };
  /** Main as this repository knows it, against which workers' drift is judged. */
  main: { ref: string; sha: string; catalog_hash: string | null } | null;
}

/** A read-only look at the buffer, tiers, focus view and quarantine; safe while a Director runs. */
export async function readStatus(ctx: RepoContext): Promise<StatusReport> {
  const memory = ctx.config.memory;
  // The summary cached for the catalog's bytes: 10,000 entries are not parsed to be counted.
  const catalog = (await readCatalogSummary(ctx.repoDir, ctx.paths.catalogSummary)).summary;
  const buffer = EventBuffer.open(ctx.paths, { readOnly: true });
  const usage = catalog.tiers;
  const focusText = await readConfinedText(ctx.repoDir, FOCUS_PATH);
  const quarantine = readQuarantine(ctx.paths.quarantine);
  const byReason: Record<string, number> = {};
  let quarantinedLines = 0;
  for (const r of quarantine) {
    byReason[r.reason] = (byReason[r.reason] ?? 0) + 1;
    quarantinedLines += r.count ?? 1;
  }
  const liveness = readLiveness(ctx.paths);
  const first = buffer.events[0]?.event.received_at;
  const last = buffer.events[buffer.events.length - 1]?.event.received_at;
  return {
    catalog: {
      version: catalog.catalog_version,
      hash: catalog.hash,
      entries: usage.st.files + usage.lt.files,
      created_at: catalog.created_at,
    },
    buffer: {
      events: buffer.count,
      bytes: buffer.totalBytes,
      max_events: memory.buffer_max_events,
      max_bytes: memory.buffer_max_bytes,
      ...(first ? { oldest: first } : {}),
      ...(last ? { newest: last } : {}),
    },
    tiers: {
      st: { ...usage.st, max_files: memory.st_max_files, max_bytes: memory.st_max_total_bytes },
      lt: { ...usage.lt, max_files: memory.lt_max_files, max_bytes: memory.lt_max_total_bytes },
    },
    focus: {
      present: focusText !== undefined,
      fresh: focusText !== undefined && parseFocusMarker(focusText)?.catalog_hash === catalog.hash,
      bytes: focusText === undefined ? 0 : Buffer.byteLength(focusText, "utf8"),
      items: focusText === undefined ? 0 : countFocusItems(focusText),
      max_bytes: memory.memory_md_max_bytes,
      max_items: memory.memory_md_max_items,
    },
    quarantine: {
      records: quarantine.length,
      lines: quarantinedLines,
      by_reason: byReason,
      max_bytes: ctx.config.quarantine.max_bytes,
      max_records: ctx.config.quarantine.max_records,
      dropped: readDropped(ctx.paths.quarantine),
    },
    spool: {
      files: listSpoolFiles(ctx.paths.spool).length,
      // Sends refused since the last drain, by sender: its share was full.
      refused: readSpoolRefusals(join(ctx.paths.spoolRoot, SPOOL_REFUSED_FILE)),
    },
    last_compaction_at: buffer.meta.last_compaction_at ?? null,
    compacted_events: buffer.meta.compacted_events,
    ...(await withDrift(
      ctx,
      summarizeSwarm(
        buffer.events.map((s) => s.event),
        receiptTime(),
        ctx.config.agent_bus.heartbeat_ttl_seconds,
        catalog.hash,
        liveness.record.workers,
      ),
      liveness.problems,
    )),
  };
}

/** A worker's drift from main, judged from its last heartbeat by `[policy.sync_main]`. */
export type WorkerDrift = Pick<
  DriftVerdict,
  "sync_required" | "reason" | "required_action" | "commits_behind" | "seconds_behind"
>;

async function withDrift(
  ctx: RepoContext,
  swarm: SwarmView,
  livenessProblems: string[],
): Promise<Pick<StatusReport, "swarm" | "main">> {
  const main = await findMain(ctx.repoDir);
  const workers: StatusReport["swarm"]["workers"] = [];
  for (const w of swarm.workers) {
    let drift: WorkerDrift | null = null;
    if (main && (w.main_ancestor_sha !== null || w.catalog_hash_seen !== null)) {
      const v = await judgeAgainstMain(
        ctx.repoDir,
        main,
        {
          ancestor: w.main_ancestor_sha,
          catalogHash: w.catalog_hash_seen ?? main.catalogHash ?? "",
        },
        ctx.config.policy.sync_main,
      );
      drift = {
        sync_required: v.sync_required,
        reason: v.reason,
        required_action: v.required_action,
        commits_behind: v.commits_behind,
        seconds_behind: v.seconds_behind,
      };
    }
    workers.push({ ...w, drift });
  }
  return {
    swarm: { ...swarm, workers, liveness_problems: livenessProblems },
    main: main ? { ref: main.ref, sha: main.sha, catalog_hash: main.catalogHash ?? null } : null,
  };
}

/** Upstream's WorkerState of one worker, with its liveness, and engram's fields as aliases. */
function snapshotWorker(w: StatusReport["swarm"]["workers"][number]) {
  const issueNumber = w.issue !== null && /^#\d+$/.test(w.issue) ? Number(w.issue.slice(1)) : null;
  return {
    worker_id: w.worker,
    state: {
      ...(w.stage !== null ? { stage: w.stage } : {}),
      ...(issueNumber !== null ? { issue_number: issueNumber } : {}),
      ...(w.attempt !== null ? { attempt: w.attempt } : {}),
      ...(w.progress !== null
        ? { progress: { step: w.stage ?? "working", percent: Math.round(w.progress * 1000) / 10 } }
        : {}),
      repo: {
        ...(w.main_ancestor_sha !== null ? { main_ancestor_sha: w.main_ancestor_sha } : {}),
        ...(w.catalog_hash_seen !== null ? { catalog_hash_seen: w.catalog_hash_seen } : {}),
      },
      last_update_at: w.last_seen,
    },
    liveness: { last_heartbeat_age_seconds: w.age_seconds, live: w.live },
    ...w,
  };
}

/**
 * The status as a `project_state_snapshot.v1` envelope from the Director, for operator tools:
 * upstream's `workers` (WorkerStates with liveness) and `queue` (engram tracks no issue
 * queue: the issues live workers hold are claimed, none is known to be eligible), then ours:
 * catalog, budgets, buffer, errors, and each worker's drift.
 */
export function snapshotEnvelope(status: StatusReport, sentAt: string): Envelope {
  const claimed = new Set<number>();
  for (const w of status.swarm.workers) {
    if (w.live && w.issue !== null && /^#\d+$/.test(w.issue)) claimed.add(Number(w.issue.slice(1)));
  }
  return {
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: "project_state_snapshot.v1",
    sent_at: sentAt,
    sender: { role: "director", id: "director" },
    seq: 0,
    payload: {
      workers: status.swarm.workers.map(snapshotWorker),
      queue: {
        eligible_issue_numbers: [],
        claimed_issue_numbers: [...claimed].sort((a, b) => a - b),
      },
      catalog: status.catalog,
      main: status.main,
      buffer: status.buffer,
      tiers: status.tiers,
      focus: status.focus,
      quarantine: status.quarantine,
      last_compaction_at: status.last_compaction_at,
      errors: status.swarm.errors,
    },
  };
}
