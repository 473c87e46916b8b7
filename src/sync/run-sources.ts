import { basename } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { redactorFor } from "../core/ingest/redact.js";
import type { SyncCandidate } from "../core/sync/item.js";
import { itemKey } from "../core/sync/item.js";
import { forgetSent } from "../core/sync/queue.js";
import { allowedFolders, type MarkdownReport, scanMarkdown } from "../sources/markdown.js";
import type { CandidateSource, SyncRunResult } from "./engine.js";
import type { QueueStore, StoredQueue } from "./queue-store.js";
import { memorySource, type TargetName } from "./service.js";

/** Whether a run for this target reads markdown files too (the knowledge graph only). */
export function markdownEnabled(ctx: RepoContext, target: TargetName): boolean {
  return target === "graphiti" && ctx.config.sources.markdown.folders.length > 0;
}

export interface Gathered {
  candidates: SyncCandidate[];
  markdown: MarkdownReport | null;
}

/** Memory's candidates and, for the knowledge graph, the markdown files' (new, changed, removed). */
export async function gatherCandidates(
  ctx: RepoContext,
  target: TargetName,
  queue: StoredQueue,
  all: boolean,
): Promise<Gathered> {
  const memory = await memorySource(ctx, undefined, { withdrawReplaced: withdraws(target) });
  const candidates = await memory.load(queue);
  if (!markdownEnabled(ctx, target)) return { candidates, markdown: null };
  const scan = await scanFiles(ctx, queue, all);
  return { candidates: [...candidates, ...scan.candidates], markdown: scan.report };
}

function scanFiles(ctx: RepoContext, queue: StoredQueue, all: boolean) {
  return scanMarkdown(queue, {
    repoDir: ctx.repoDir,
    stateDir: ctx.paths.root,
    config: ctx.config.sources.markdown,
    redactor: redactorFor(ctx.config),
    project: ctx.config.sync.project ?? basename(ctx.repoDir),
    all,
    // Folders outside the repository: only those the user names (docs/security.md).
    allowedOutside: allowedFolders(process.env),
    userConfig: trustOf(ctx).userConfig,
  });
}

/** What a run without `--id` reads, and the markdown report once it has been read. */
export interface RunSource {
  source: CandidateSource;
  sourceHash?: string;
  report: () => MarkdownReport | null;
  /**
   * With markdown files, the engine cannot skip the whole source: the memory part's hash is
   * recorded after the run instead, so unchanged memory is still not rebuilt.
   */
  memoryHash?: string;
}

/**
 * The source of a run. Memory alone keeps the engine's shortcut (nothing is built while the
 * catalog is unchanged). With markdown files the files are read on every run (only reading
 * them tells whether they changed), and memory is rebuilt only when its hash differs from the
 * one recorded after the last run (`memoryHash`). `all` forgets what was sent for every
 * candidate, in the journal, so the engine queues each one again with its remote id (the
 * store replaces its copy).
 */
export async function runSource(
  ctx: RepoContext,
  target: TargetName,
  store: QueueStore,
  all: boolean,
): Promise<RunSource> {
  let report: MarkdownReport | null = null;
  if (all) {
    const queue = store.load();
    const gathered = await gatherCandidates(ctx, target, queue, true);
    const keys = gathered.candidates.filter((c) => c.verdict.sync).map((c) => itemKey(c.item));
    store.commit(forgetSent(queue, keys), keys);
    return { source: gathered.candidates, report: () => gathered.markdown };
  }
  const memory = await memorySource(ctx, undefined, { withdrawReplaced: withdraws(target) });
  if (markdownEnabled(ctx, target)) {
    const source = async (queue: StoredQueue) => {
      const fromMemory = queue.source_hash === memory.hash ? [] : await memory.load(queue);
      const scan = await scanFiles(ctx, queue, false);
      report = scan.report;
      return [...fromMemory, ...scan.candidates];
    };
    return { source, report: () => report, memoryHash: memory.hash };
  }
  return { source: memory.load, sourceHash: memory.hash, report: () => null };
}

/**
 * The seed's run statistics. `processed` = `succeeded` + `failed` (failed for good, or left to
 * retry) + `deferred` (a send whose outcome is unknown, waiting for the store to show it);
 * `skipped` counts only what needed no send (unchanged markdown files), never a failure.
 */
export interface RunStats {
  processed: number;
  succeeded: number;
  failed: number;
  deferred: number;
  skipped: number;
}

export function runStats(result: SyncRunResult, markdown: MarkdownReport | null): RunStats {
  const s = result.sent;
  const failed = s.failed + s.retry_later + s.skipped;
  return {
    processed: s.created_or_updated + failed + s.deferred,
    succeeded: s.created_or_updated,
    failed,
    deferred: s.deferred,
    skipped: markdown?.unchanged ?? 0,
  };
}

/** The stores a replaced insight is withdrawn from (Tana drops a learning that left memory). */
function withdraws(target: TargetName): boolean {
  return target === "graphiti" || target === "notion";
}
