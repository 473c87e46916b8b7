import { mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { canonicalJson, sha256Hex } from "../core/model/canonical.js";
import type { SyncCandidate } from "../core/sync/item.js";
import { itemHash, itemKey } from "../core/sync/item.js";
import { DEFAULT_THRESHOLDS, evolutionVerdict, type SyncThresholds } from "../core/sync/policy.js";
import { DEFAULT_SCHEDULE, type SyncSchedule, type TargetQueue } from "../core/sync/queue.js";
import { supersededItem, syncCandidates } from "../core/sync/sources.js";
import { replacedInsightIds, withdrawnInsight } from "../core/sync/withdraw.js";
import { graphitiUrl, notionAccess } from "../core/trust/destinations.js";
import { UsageError } from "../errors.js";
import { readKnowledge } from "../repo/knowledge.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import { STATE_DIR_MODE, writeFileAtomicSync } from "../state/atomic.js";
import { acquireLock, type Lock } from "../state/lock.js";
import { loadSealKey } from "../state/seal-key.js";
import { QueueStore } from "./queue-store.js";
import { readRecordedIds, recordedIdsPath, syncDir } from "./state-paths.js";
import { SyncLog } from "./sync-log.js";
import { openTanaTarget } from "./tana-open.js";
import type { TargetName } from "./target-names.js";
import { GraphitiTarget } from "./targets/graphiti-target.js";
import { type NotionIds, NotionTarget } from "./targets/notion-target.js";
import type { SyncTarget } from "./targets/target.js";

export { parseTarget, TARGETS, type TargetName } from "./target-names.js";
export { readRecordedIds, syncDir };

/** The `[sync]` keys named like the fields of `defaults`, so each setting is listed once. */
function pick<T extends object>(ctx: RepoContext, defaults: T): T {
  const s = ctx.config.sync as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.keys(defaults).map((key) => [key, s[key]])) as T;
}

export function scheduleOf(ctx: RepoContext): SyncSchedule {
  return pick(ctx, DEFAULT_SCHEDULE);
}

export function thresholdsOf(ctx: RepoContext): SyncThresholds {
  return pick(ctx, DEFAULT_THRESHOLDS);
}

export function syncLog(ctx: RepoContext): SyncLog {
  return new SyncLog(join(syncDir(ctx), "log"), ctx.config.sync.log_keep_weeks);
}

export function queueStore(ctx: RepoContext, target: TargetName): QueueStore {
  return new QueueStore(syncDir(ctx), target);
}

/** One sync process per state folder at a time: two would send the same item twice. */
export async function lockSync(ctx: RepoContext): Promise<Lock> {
  return acquireLock(join(syncDir(ctx), "sync.lock"), { timeoutMs: 30_000 });
}

/**
 * Every candidate memory offers (from the catalog on disk, its engrams and the sessions'
 * knowledge records), plus the earlier
 * memory versions the queue knows, now superseded. `hash` is the catalog's: the engine skips
 * building candidates when the queue last read the same memory.
 */
export async function memorySource(
  ctx: RepoContext,
  requested: ReadonlySet<string> = new Set(),
  options: { withdrawReplaced?: boolean } = {},
): Promise<{ hash: string; load: (queue: TargetQueue) => Promise<SyncCandidate[]> }> {
  const catalog = await readCatalog(ctx.repoDir);
  const s = ctx.config.sync;
  const load = async (queue: TargetQueue) => {
    const engrams = [...(await loadEngrams(ctx.repoDir, catalog.entries)).values()];
    const sourceOptions = {
      knowledge: await readKnowledge(ctx.repoDir, catalog),
      thresholds: thresholdsOf(ctx),
      default_privacy: s.default_privacy,
      default_confidence: s.default_confidence,
      project: s.project ?? basename(ctx.repoDir),
      requested,
    };
    const candidates = syncCandidates(engrams, catalog, sourceOptions);
    if (options.withdrawReplaced === true) {
      // An insight the store holds (or is about to get) that a later item replaced.
      const offered = new Set(
        candidates.filter((c) => c.item.type === "insight").map((c) => c.item.local_id),
      );
      for (const id of replacedInsightIds(engrams, sourceOptions, offered)) {
        const key = `insight:${id}`;
        const withdrawn = withdrawnInsight(id);
        const known = queue.mapping[key] ?? queue.records[key];
        if (known === undefined) continue;
        if (queue.mapping[key]?.content_hash === itemHash(withdrawn.item)) continue;
        candidates.push(withdrawn);
      }
    }
    const current = `gen_${catalog.catalog_version}`;
    for (const record of Object.values(queue.records)) {
      if (record.type !== "evolution" || record.local_id === current) continue;
      if (record.item.fields.status !== "current") continue;
      candidates.push({ item: supersededItem(record.item), verdict: evolutionVerdict() });
    }
    return candidates;
  };
  // The policy's thresholds are part of what decides the queue: a change of config is new input.
  return { hash: `${catalog.hash}|${sha256Hex(canonicalJson(s))}`, load };
}

/** The keys of the local ids asked for by `sync --id`; unknown ids are a usage error. */
export function requestedKeys(
  candidates: readonly SyncCandidate[],
  ids: readonly string[],
): Set<string> {
  const keys = new Set<string>();
  for (const id of ids) {
    const found = candidates.find((c) => c.item.local_id === id || itemKey(c.item) === id);
    if (found === undefined) {
      throw new UsageError(
        `--id ${id}: no episode, insight (k_ ids: sessions' knowledge), pattern or memory version has this id`,
      );
    }
    keys.add(itemKey(found.item));
  }
  return keys;
}

/**
 * Which of the ids `sync --id` names are private: they never leave, whatever is asked, and
 * the command says so rather than sending nothing in silence.
 */
export async function privateRequested(
  ctx: RepoContext,
  target: TargetName,
  ids: readonly string[],
): Promise<string[]> {
  const candidates = await (await memorySource(ctx)).load(queueStore(ctx, target).peek());
  requestedKeys(candidates, ids); // an unknown id is a usage error, said first
  return ids.filter((id) =>
    candidates.some(
      (c) => (c.item.local_id === id || itemKey(c.item) === id) && c.item.privacy === "private",
    ),
  );
}

export function writeRecordedIds(ctx: RepoContext, ids: NotionIds): void {
  mkdirSync(dirname(recordedIdsPath(ctx)), { recursive: true, mode: STATE_DIR_MODE });
  writeFileAtomicSync(recordedIdsPath(ctx), `${JSON.stringify(ids, null, 2)}\n`);
}

/** How a run uses its target: `resend` sends again what was delivered (`sync run --all`). */
export interface OpenOptions {
  resend?: boolean;
}

/** The target by name; each new store (Graphiti, Tana) adds its case here. */
export function openTarget(
  ctx: RepoContext,
  name: TargetName,
  options: OpenOptions = {},
): SyncTarget {
  if (name === "graphiti") {
    const graphiti = ctx.config.sync.graphiti;
    return new GraphitiTarget({
      config: { ...graphiti, url: graphitiUrl(graphiti, trustOf(ctx)) },
      resend: options.resend === true,
      ownGroups: [
        ...Object.values(graphiti.groups),
        ...ctx.config.sources.markdown.folders.flatMap((f) => (f.group ? [f.group] : [])),
      ],
    });
  }
  if (name === "tana") return openTanaTarget(ctx, queueStore(ctx, "tana").load().mapping);
  if (name !== "notion") throw new UsageError(`no sync target "${name}"`);
  const config = ctx.config.sync.notion;
  const notion = notionAccess(config, trustOf(ctx));
  return new NotionTarget({
    config: { ...config, base_url: notion.url, token_env: notion.tokenVar },
    token: notion.token,
    recorded: readRecordedIds(ctx),
  });
}

/** What every run of the engine takes from the repository: schedule, clock, log, seal key. */
export function engineSettings(ctx: RepoContext) {
  return {
    schedule: scheduleOf(ctx),
    clock: receiptTime,
    log: syncLog(ctx),
    sealKey: sealKeyOf(ctx),
  };
}

/** The local seal key, created on first use (the same key `worker emit` seals notes with). */
export function sealKeyOf(ctx: RepoContext): () => Uint8Array | undefined {
  return () => loadSealKey(ctx.paths.sealKey, true);
}
