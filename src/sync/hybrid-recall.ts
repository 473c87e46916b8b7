import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { redactorFor } from "../core/ingest/redact.js";
import { tokenize } from "../core/recall/recall.js";
import {
  type CacheEntry,
  cacheKey,
  cacheVerdict,
  outboundQuery,
  type RemoteHit,
  type RemoteMode,
  rankRemote,
  remoteMode,
  type SyncedItem,
} from "../core/sync/remote-recall.js";
import { notionAccess } from "../core/trust/destinations.js";
import { QueueStore } from "./queue-store.js";
import { RecallCache } from "./recall-cache.js";
import { readRecordedIds, syncDir } from "./state-paths.js";
import { SyncLog } from "./sync-log.js";

/**
 * Hybrid recall: local memory first, then the external stores memory syncs to, by the seed's
 * confidence bands (see `remoteMode`). Remote answers are cached in the state folder for
 * `[sync] recall_cache_ttl_seconds`; a store that is down or not set up never fails the
 * recall, it is reported beside the local answer.
 */

/** Asked now, answered from the cache, left to the background, or not usable now. */
export type TargetState = "queried" | "cached" | "deferred" | "unavailable";

export interface TargetReport {
  target: string;
  state: TargetState;
  hits: number;
  message: string | null;
  latency_ms: number | null;
}

export type CachedRemoteHit = RemoteHit & { cached: boolean };

export interface RemoteRecall {
  mode: RemoteMode;
  /** Whether any store's answer (fresh or cached) is part of this recall. */
  asked: boolean;
  reason: string;
  targets: TargetReport[];
  hits: CachedRemoteHit[];
  /** What the user should know: a store down, not set up, or checked in the background. */
  notices: string[];
}

export interface RemoteRecallRequest {
  query: string;
  confidence: number | undefined;
  /** Local hits already found: the 0.5-0.7 band asks the stores only when there are none. */
  localHits: number;
  limit: number;
  /** Ignore (and drop) cached answers. */
  refresh: boolean;
  /**
   * How a 0.7+ recall validates: `spawn` starts a detached process (a CLI cannot outlive
   * itself), `inline` runs it after the answer in this process (a long-lived server).
   */
  background: "spawn" | "inline";
}

type TargetName = "notion" | "graphiti";

interface RecallTarget {
  name: TargetName;
  /** Set up but not usable (no token): reported, not asked. */
  problem: string | null;
}

/**
 * The stores recall may ask: Notion once its databases are known (`sync init` or
 * `[sync.notion] databases`), Graphiti once it is configured (`graphitiConfigured`).
 */
export function recallTargets(ctx: RepoContext): RecallTarget[] {
  const out: RecallTarget[] = [];
  const notion = ctx.config.sync.notion;
  const configured =
    Object.values(notion.databases).some((id) => id !== undefined) ||
    Object.keys(readRecordedIds(ctx)).length > 0;
  if (configured) {
    let problem: string | null = null;
    try {
      const access = notionAccess(notion, trustOf(ctx));
      if (access.token === "") {
        problem = `no token: set the environment variable ${access.tokenVar}`;
      }
    } catch (error) {
      // A destination or token variable the environment does not allow: reported, not asked.
      problem = (error as Error).message;
    }
    out.push({ name: "notion", problem });
  }
  if (graphitiConfigured(ctx)) out.push({ name: "graphiti", problem: null });
  return out;
}

/**
 * Whether this clone may ask the knowledge graph: the environment names its server, the
 * config names one (a `url` other than the default, which `director init` writes for every
 * repository), or memory was synced to it from here. A worker is rarely the machine that
 * syncs, and a low confidence is when recall must reach beyond it.
 */
function graphitiConfigured(ctx: RepoContext): boolean {
  if (process.env.ENGRAM_GRAPHITI_URL) return true;
  if (ctx.config.sync.graphiti.url !== GRAPHITI_DEFAULT_URL) return true;
  return existsSync(join(syncDir(ctx), "graphiti"));
}

/** The `[sync.graphiti] url` a config has when nobody set it. */
export const GRAPHITI_DEFAULT_URL = "http://localhost:8000/mcp/";

export function recallCache(ctx: RepoContext): RecallCache {
  return new RecallCache(join(syncDir(ctx), "recall-cache.json"));
}

const BANDS: Record<RemoteMode, string> = {
  off: "no confidence stated: local memory only",
  now: "confidence below 0.5: the stores are asked at once",
  on_miss: "confidence 0.5 to 0.7: the stores are asked when local memory finds nothing",
  background: "confidence 0.7 or more: local memory answers, the stores validate in the background",
};

export async function remoteRecall(
  ctx: RepoContext,
  original: RemoteRecallRequest,
): Promise<RemoteRecall> {
  // Before any store, the cache or a background job sees it.
  const query = outboundQuery(original.query, redactorFor(ctx.config));
  const request = { ...original, query };
  const mode = remoteMode(request.confidence);
  const none = (reason: string, notices: string[] = []): RemoteRecall => ({
    mode,
    asked: false,
    reason,
    targets: [],
    hits: [],
    notices,
  });
  if (mode === "off") return none(BANDS.off);
  if (mode === "on_miss" && request.localHits > 0) {
    return none(`${BANDS.on_miss}; local memory found ${request.localHits}`);
  }
  if (tokenize(request.query).length === 0) return none("the query has no word to search for");
  const targets = recallTargets(ctx);
  if (targets.length === 0) {
    return none(BANDS[mode], [
      "no external store is set up for recall (director sync init): answered from local memory only",
    ]);
  }
  const cache = recallCache(ctx);
  const entries = request.refresh ? {} : cache.read();
  const now = receiptTime();
  const ttl = ctx.config.sync.recall_cache_ttl_seconds;
  const reports: TargetReport[] = [];
  const hits: CachedRemoteHit[] = [];
  const notices: string[] = [];
  const toAsk: TargetName[] = [];
  const stale: string[] = [];
  for (const target of targets) {
    const key = cacheKey(target.name, request.query);
    if (target.problem !== null) {
      reports.push(report(target.name, "unavailable", 0, target.problem));
      notices.push(`${target.name} ${target.problem}: answered from local memory only`);
      continue;
    }
    const entry = entries[key];
    if (entry !== undefined) {
      const verdict = cacheVerdict(entry, now, ttl, syncedSince(ctx, target.name, entry));
      if (verdict.fresh) {
        const cached = entry.hits.slice(0, request.limit).map((h) => ({ ...h, cached: true }));
        hits.push(...cached);
        reports.push(report(target.name, "cached", cached.length, `fetched ${entry.fetched_at}`));
        continue;
      }
      stale.push(key);
    } else if (request.refresh) {
      stale.push(key);
    }
    toAsk.push(target.name);
  }
  if (toAsk.length > 0 && mode === "background") {
    const started = startValidation(ctx, request, toAsk);
    for (const name of toAsk) {
      reports.push(report(name, "deferred", 0, started));
    }
    notices.push(`${toAsk.join(", ")}: ${started}`);
  } else if (toAsk.length > 0) {
    const asked = await askTargets(ctx, request.query, request.limit, toAsk, now);
    cache.update(asked.entries, stale);
    reports.push(...asked.reports);
    hits.push(...asked.hits);
    notices.push(...asked.notices);
  }
  const ranked = rankRemote(hits, request.limit) as CachedRemoteHit[];
  const asked = reports.some((r) => r.state === "queried" || r.state === "cached");
  return {
    mode,
    asked,
    reason: BANDS[mode],
    targets: reports.sort((a, b) => (a.target < b.target ? -1 : 1)),
    hits: ranked,
    notices,
  };
}

function report(
  target: string,
  state: TargetState,
  hits: number,
  message: string | null,
  latency: number | null = null,
): TargetReport {
  return { target, state, hits, message, latency_ms: latency };
}

/** Asks each store at once, caches what they answer, logs each ask for the hit-rate metric. */
export async function askTargets(
  ctx: RepoContext,
  asked: string,
  limit: number,
  targets: readonly TargetName[],
  now: string,
): Promise<{
  entries: Record<string, CacheEntry>;
  reports: TargetReport[];
  hits: CachedRemoteHit[];
  notices: string[];
}> {
  const { openSearcher } = await import("./remote-search.js");
  // A background validation's query was redacted by the recall that started it; once more
  // costs nothing and covers any other caller.
  const query = outboundQuery(asked, redactorFor(ctx.config));
  const tokens = [...new Set(tokenize(query))].sort();
  const results = await Promise.all(
    targets.map(async (name) => {
      const started = performance.now();
      let searcher: Awaited<ReturnType<typeof openSearcher>> | undefined;
      try {
        searcher = await openSearcher(ctx, name);
        const found = rankRemote(await searcher.search(query, limit), limit);
        return { name, found, error: null, ms: Math.round(performance.now() - started) };
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        return { name, found: [], error: message, ms: Math.round(performance.now() - started) };
      } finally {
        await searcher?.close().catch(() => undefined);
      }
    }),
  );
  const entries: Record<string, CacheEntry> = {};
  const reports: TargetReport[] = [];
  const hits: CachedRemoteHit[] = [];
  const notices: string[] = [];
  for (const r of results) {
    if (r.error !== null) {
      reports.push(report(r.name, "unavailable", 0, r.error, r.ms));
      notices.push(`${r.name} unreachable (${r.error}): answered from local memory only`);
      continue;
    }
    entries[cacheKey(r.name, query)] = {
      target: r.name,
      query: query.slice(0, 500),
      tokens,
      fetched_at: now,
      hits: r.found,
    };
    reports.push(report(r.name, "queried", r.found.length, null, r.ms));
    hits.push(...r.found.map((h) => ({ ...h, cached: false })));
  }
  new SyncLog(join(syncDir(ctx), "log"), ctx.config.sync.log_keep_weeks).append(
    results.map((r) => ({
      at: now,
      target: r.name,
      op: "recall" as const,
      ok: r.error === null && r.found.length > 0,
      latency_ms: r.ms,
      ...(r.error !== null ? { error: r.error.slice(0, 300) } : {}),
      detail: { hits: r.found.length },
    })),
  );
  return { entries, reports, hits, notices };
}

/**
 * The items the engine synced to this target after the entry was fetched, with their words:
 * read from the queue without its lock (nothing is written), so a recall never waits on a run.
 */
function syncedSince(ctx: RepoContext, target: TargetName, entry: CacheEntry): SyncedItem[] {
  const dir = join(syncDir(ctx), target);
  if (!existsSync(dir)) return [];
  let queue: ReturnType<QueueStore["peek"]>;
  try {
    queue = new QueueStore(syncDir(ctx), target).peek();
  } catch {
    // A queue that cannot be read says nothing about the cache: it stays as it is.
    return [];
  }
  const out: SyncedItem[] = [];
  for (const [key, mapped] of Object.entries(queue.mapping)) {
    if (mapped.synced_at <= entry.fetched_at) continue;
    const item = queue.records[key]?.item;
    const tags = item?.fields.tags;
    const text =
      item === undefined
        ? ""
        : [
            item.title,
            Array.isArray(tags) ? tags.join(" ") : "",
            item.sealed_content === undefined ? item.content : "",
          ].join(" ");
    out.push({ key, synced_at: mapped.synced_at, text });
  }
  return out;
}

/**
 * Starts the validation of a 0.7+ recall. A CLI process ends with its answer, so it starts a
 * detached process that asks the stores and fills the cache the next recall reads; a server
 * runs it after answering.
 */
function startValidation(
  ctx: RepoContext,
  request: RemoteRecallRequest,
  targets: readonly TargetName[],
): string {
  if (request.background === "inline") {
    void askTargets(ctx, request.query, request.limit, targets, receiptTime())
      .then((asked) => recallCache(ctx).update(asked.entries))
      .catch(() => undefined);
    return "validating in the background; the next recall reads the answer from the cache";
  }
  const script = fileURLToPath(new URL("./recall-validate.js", import.meta.url));
  const job = {
    repo: ctx.repoDir,
    config: existsSync(ctx.configPath) ? ctx.configPath : undefined,
    query: request.query,
    limit: request.limit,
    targets,
  };
  try {
    const child = spawn(process.execPath, [script, JSON.stringify(job)], {
      cwd: ctx.repoDir,
      detached: true,
      stdio: "ignore",
    });
    child.on("error", () => undefined);
    child.unref();
    return `validation started in the background (pid ${child.pid}); the next recall reads its answer from the cache`;
  } catch (error) {
    return `remote check deferred: the background validation could not start (${(error as Error).message})`;
  }
}
