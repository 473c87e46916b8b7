import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { type SyncMetrics, syncMetrics } from "../core/sync/metrics.js";
import { sanitizedPreview } from "../core/sync/privacy.js";
import { type QueueDepth, queueDepth, requeue, setApproval } from "../core/sync/queue.js";
import { UsageError } from "../errors.js";
import type { Registry } from "../schema/registry.js";
import type { MarkdownReport } from "../sources/markdown.js";
import { type CandidateSource, runSync, type SyncRunResult } from "./engine.js";
import type { TargetStatus } from "./queue-store.js";
import { type RunStats, runSource, runStats } from "./run-sources.js";
import {
  engineSettings,
  lockSync,
  memorySource,
  openTarget,
  queueStore,
  requestedKeys,
  syncLog,
  type TargetName,
  writeRecordedIds,
} from "./service.js";

export { tanaSummary } from "./tana-service.js";

import { type PlacedLearnings, type TanaReport, tanaInit, tanaRun } from "./tana-service.js";
import { NotionTarget } from "./targets/notion-target.js";
import type { SchemaReport, TargetHealth } from "./targets/target.js";

export interface RunRequest {
  target: TargetName;
  /** Local ids to sync whatever the policy says (privacy still applies). */
  ids?: readonly string[];
  /** Send priority 2 now, without waiting for the batch interval. */
  force?: boolean;
  /** Send everything again, changed or not (`--all`). */
  all?: boolean;
  /** Tana: create again the nodes whose mapping is stale (gone from the workspace). */
  resync?: boolean;
  /** Items written so far of those due (a terminal shows it). */
  progress?: (done: number, total: number) => void;
  /** Tana: the people and projects learnings link to (`config/registry.toml`). */
  registry?: Registry;
  /** Tana: learning states (`worker learnings`); without, every learning on main is confirmed. */
  learnings?: PlacedLearnings;
}

/** A run's result with its statistics and, when markdown files were read, what they were. */
export interface RunReport extends SyncRunResult {
  stats: RunStats;
  markdown: MarkdownReport | null;
  /** Tana only: schema, stale mappings, archiving, links. */
  tana?: TanaReport;
}

/** `director sync run` and `director sync --id`: one run of the engine, under the sync lock. */
export async function syncRun(ctx: RepoContext, request: RunRequest): Promise<RunReport> {
  if (request.target === "tana") {
    const result = await tanaRun(ctx, request);
    return { ...result, stats: runStats(result, null), markdown: null };
  }
  if (request.resync === true) throw new UsageError("--resync goes with --target tana");
  const lock = await lockSync(ctx);
  try {
    const store = queueStore(ctx, request.target);
    const ids = request.ids ?? [];
    let only: Set<string> | undefined;
    let source: CandidateSource;
    let sourceHash: string | undefined;
    let markdown: () => MarkdownReport | null = () => null;
    let memoryHash: string | undefined;
    if (ids.length > 0) {
      // Explicit requests: every candidate is built, the named ones pass the policy.
      const all = await memorySource(ctx);
      only = requestedKeys(await all.load(store.load()), ids);
      const localIds = new Set([...only].map((k) => k.slice(k.indexOf(":") + 1)));
      const asked = await memorySource(ctx, localIds);
      source = async (queue) =>
        (await asked.load(queue)).filter((c) => only?.has(`${c.item.type}:${c.item.local_id}`));
    } else {
      const read = await runSource(ctx, request.target, store, request.all === true);
      source = read.source;
      sourceHash = read.sourceHash;
      markdown = read.report;
      memoryHash = read.memoryHash;
    }
    const target = openTarget(ctx, request.target, { resend: request.all === true });
    const result = await runSync(source, {
      store,
      target,
      ...engineSettings(ctx),
      force: request.force === true,
      ...(only ? { only } : {}),
      ...(sourceHash !== undefined ? { sourceHash } : {}),
    }).finally(() => closeTarget(target));
    if (memoryHash !== undefined) store.commit({ ...store.load(), source_hash: memoryHash }, []);
    const report = markdown();
    if (report !== null) result.notices.unshift(...report.warnings);
    return { ...result, stats: runStats(result, report), markdown: report };
  } finally {
    lock.release();
  }
}

export interface StatusReport {
  target: TargetName;
  health: TargetHealth;
  last: TargetStatus | null;
  depth: QueueDepth;
  metrics: SyncMetrics;
  mapped: number;
}

/** `director sync status`: a live health check, the queue by state, and the seed's metrics. */
export async function syncStatus(ctx: RepoContext, target: TargetName): Promise<StatusReport> {
  const queued = queueStatus(ctx, target);
  const opened = openTarget(ctx, target);
  const health = await opened.health().finally(() => closeTarget(opened));
  return { target, health, ...queued };
}

/**
 * The queue by state and the metrics, as the state folder holds them: no call to the store
 * and no lock (nothing is written), so it answers at once even while a run goes on.
 */
export function queueStatus(
  ctx: RepoContext,
  target: TargetName,
): Omit<StatusReport, "target" | "health"> {
  const queue = queueStore(ctx, target).peek();
  return {
    last: queue.status,
    depth: queueDepth(queue),
    metrics: syncMetrics(syncLog(ctx).read(), target, queue.status),
    mapped: Object.keys(queue.mapping).length,
  };
}

export interface PendingItem {
  key: string;
  type: string;
  local_id: string;
  priority: number;
  reasons: string[];
  queued_at: string;
  fields: Record<string, unknown>;
  preview: { chars: number; words: number; shape: string } | { sealed_parts: number };
}

const PREVIEW_FIELDS = [
  "kind",
  "confidence",
  "surprise_score",
  "outcome",
  "timestamp",
  "evidence_count",
  "frequency",
  "status",
];

/** `director sync pending`: sensitive items waiting for approval, as sanitized previews. */
export function syncPending(ctx: RepoContext, target: TargetName): PendingItem[] {
  const queue = queueStore(ctx, target).load();
  return Object.values(queue.records)
    .filter((r) => r.state === "pending" && r.privacy === "sensitive" && r.approval === "none")
    .sort((a, b) => a.priority - b.priority || (a.key < b.key ? -1 : 1))
    .map((r) => {
      const fields: Record<string, unknown> = {};
      for (const name of PREVIEW_FIELDS) {
        if (r.item.fields[name] !== undefined) fields[name] = r.item.fields[name];
      }
      return {
        key: r.key,
        type: r.type,
        local_id: r.local_id,
        priority: r.priority,
        reasons: r.reasons,
        queued_at: r.queued_at,
        fields,
        preview:
          r.item.sealed_content !== undefined
            ? { sealed_parts: r.item.sealed_content.length }
            : sanitizedPreview(r.item.content),
      };
    });
}

/** `director sync approve|reject ID...`: recorded in the queue, kept across re-queues. */
export async function syncDecide(
  ctx: RepoContext,
  target: TargetName,
  ids: readonly string[],
  decision: "approved" | "rejected",
): Promise<{ decided: string[] }> {
  const lock = await lockSync(ctx);
  try {
    const store = queueStore(ctx, target);
    let queue = store.load();
    const keys: string[] = [];
    for (const id of ids) {
      const record = Object.values(queue.records).find((r) => r.key === id || r.local_id === id);
      if (record === undefined)
        throw new UsageError(`${id}: no queued item has this id (see director sync pending)`);
      if (record.privacy !== "sensitive") {
        throw new UsageError(`${id}: privacy ${record.privacy}, not sensitive: nothing to approve`);
      }
      queue = setApproval(queue, record.key, decision);
      keys.push(record.key);
    }
    store.commit(queue, keys);
    const at = receiptTime();
    syncLog(ctx).append(
      keys.map(
        (key) => ({ at, target, op: decision === "approved" ? "approve" : "reject", key }) as const,
      ),
    );
    return { decided: keys };
  } finally {
    lock.release();
  }
}

export interface RetryReport {
  /** Keys put back to pending. */
  requeued: string[];
  /** Failed records left alone (not asked for); with `--all`, none. */
  still_failed: number;
}

/**
 * `director sync retry --id ID... | --all`: failed items back to pending, their attempts reset
 * (the operator fixed what a permanent error named, or does not want to wait for the store
 * to be healthy). A record whose last send's outcome was unknown is still looked up by its
 * key before it is sent, so a retry never makes a second copy.
 */
export async function syncRetry(
  ctx: RepoContext,
  target: TargetName,
  request: { ids: readonly string[]; all: boolean },
): Promise<RetryReport> {
  if (request.all === request.ids.length > 0) {
    throw new UsageError("sync retry: give --id ID (one or more) or --all");
  }
  const lock = await lockSync(ctx);
  try {
    const store = queueStore(ctx, target);
    let queue = store.load();
    const failed = Object.values(queue.records).filter((r) => r.state === "failed");
    const chosen = request.all
      ? failed
      : request.ids.map((id) => {
          const record = Object.values(queue.records).find(
            (r) => r.key === id || r.local_id === id,
          );
          if (record === undefined) {
            throw new UsageError(`${id}: no queued item has this id (see director sync status)`);
          }
          if (record.state !== "failed") {
            throw new UsageError(`${id}: ${record.state}, not failed: nothing to retry`);
          }
          return record;
        });
    const keys = [...new Set(chosen.map((r) => r.key))].sort();
    for (const key of keys) queue = requeue(queue, key);
    if (keys.length > 0) store.commit(queue, keys);
    const at = receiptTime();
    syncLog(ctx).append(keys.map((key) => ({ at, target, op: "retry", key }) as const));
    return { requeued: keys, still_failed: failed.length - keys.length };
  } finally {
    lock.release();
  }
}

/** `director sync init --target notion`: creates or validates the databases, records their ids. */
export async function syncInit(ctx: RepoContext, target: TargetName): Promise<SchemaReport> {
  if (target === "tana") return tanaInit(ctx);
  const lock = await lockSync(ctx);
  try {
    const opened = openTarget(ctx, target);
    const report = await opened.ensureSchema().finally(() => closeTarget(opened));
    if (opened instanceof NotionTarget) writeRecordedIds(ctx, opened.recordedIds());
    return report;
  } finally {
    lock.release();
  }
}

/** A target holding a connection (the MCP session of Graphiti) lets the process exit. */
async function closeTarget(target: object): Promise<void> {
  const close = (target as { close?: () => Promise<void> }).close;
  if (typeof close === "function") await close.call(target).catch(() => undefined);
}
