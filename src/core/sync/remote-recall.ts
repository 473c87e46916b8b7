import type { Redactor } from "../ingest/redact.js";
import { tokenize } from "../recall/recall.js";

/**
 * Hybrid recall, the pure part: when a recall asks the external stores (the seed's
 * confidence bands), what a cached remote answer is worth, and when a sync makes it stale.
 * Times are ISO UTC strings given by the caller.
 */

/**
 * - `off`: no confidence stated, local memory only (the plain `worker recall`);
 * - `now`: below 0.5, the caller is unsure: the stores are asked at once;
 * - `on_miss`: 0.5 to 0.7, asked only when local memory found nothing;
 * - `background`: 0.7 or more, local memory answers; the stores validate later.
 */
export type RemoteMode = "off" | "now" | "on_miss" | "background";

export const ASK_NOW_BELOW = 0.5;
export const BACKGROUND_FROM = 0.7;

export function remoteMode(confidence: number | undefined): RemoteMode {
  if (confidence === undefined) return "off";
  if (confidence < ASK_NOW_BELOW) return "now";
  if (confidence < BACKGROUND_FROM) return "on_miss";
  return "background";
}

/** One hit from an external store, as cached (the `cached` flag is set when it is read back). */
export interface RemoteHit {
  source: string;
  /** The store's id: a Notion page id, a Graphiti node or fact uuid. */
  remote_id: string;
  /** What the store holds it as: a Notion database type, or `node` / `fact` in Graphiti. */
  kind: string;
  title: string;
  snippet: string;
  /** Share of the query's words the hit matched (Notion), or the store's rank turned to (0, 1]. */
  score: number;
  /** The engram item it was synced from, when the store says (`sync_key`, `local_id`). */
  sync_key: string | null;
  local_id: string | null;
  url: string | null;
}

export interface CacheEntry {
  target: string;
  query: string;
  tokens: string[];
  fetched_at: string;
  hits: RemoteHit[];
}

/**
 * A recall query as it may leave the machine, for a store, the recall cache or a background
 * validation: its secrets taken out (a marker is no word to search for), so a token pasted
 * into a question reaches neither Graphiti nor Notion nor `.engram/sync/recall-cache.json`.
 */
export function outboundQuery(query: string, redactor: Redactor): string {
  const { text, count } = redactor.redact(query);
  if (count === 0) return query;
  return text
    .replace(/\[REDACTED:[a-z0-9-]+\]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The cache key of a query for one target: its words, so "Retry, deploy" and "deploy retry" share it. */
export function cacheKey(target: string, query: string): string {
  return `${target}|${[...new Set(tokenize(query))].sort().join(" ")}`;
}

/** What the sync engine sent since a time: enough to tell whether a cached answer is stale. */
export interface SyncedItem {
  key: string;
  synced_at: string;
  /** The item's words (title, tags, clear content); empty when they are sealed. */
  text: string;
}

export type CacheVerdict =
  | { fresh: true }
  | { fresh: false; reason: "expired" | "related_sync"; detail: string };

/**
 * A cached answer is fresh within the TTL unless an item related to it was synced after it
 * was fetched: one of its hits (a changed page), or an item sharing a word with the query
 * (a new page the old answer could not contain).
 */
export function cacheVerdict(
  entry: CacheEntry,
  now: string,
  ttlSeconds: number,
  synced: readonly SyncedItem[],
): CacheVerdict {
  const age = (Date.parse(now) - Date.parse(entry.fetched_at)) / 1000;
  if (!(age < ttlSeconds)) {
    return { fresh: false, reason: "expired", detail: `fetched ${Math.round(age)} s ago` };
  }
  const hitKeys = new Set(entry.hits.flatMap((h) => (h.sync_key === null ? [] : [h.sync_key])));
  const words = new Set(entry.tokens);
  for (const item of synced) {
    if (Date.parse(item.synced_at) <= Date.parse(entry.fetched_at)) continue;
    if (hitKeys.has(item.key) || tokenize(item.text).some((t) => words.has(t))) {
      return {
        fresh: false,
        reason: "related_sync",
        detail: `${item.key} synced ${item.synced_at}`,
      };
    }
  }
  return { fresh: true };
}

/**
 * Ranks a store's matches for the query: the share of the query's words found in the title
 * and tags; those matching none are dropped (a store's fuzzy match is not a hit).
 */
export function scoreByWords(query: string, text: string): number {
  const wanted = [...new Set(tokenize(query))];
  if (wanted.length === 0) return 0;
  const have = new Set(tokenize(text));
  const found = wanted.filter((t) => have.has(t)).length;
  return Math.round((found / wanted.length) * 1000) / 1000;
}

/** Best first, then by title and id, so the same store contents give the same answer. */
export function rankRemote(hits: readonly RemoteHit[], limit: number): RemoteHit[] {
  return [...hits]
    .sort(
      (a, b) =>
        b.score - a.score ||
        (a.title < b.title ? -1 : a.title > b.title ? 1 : 0) ||
        (a.remote_id < b.remote_id ? -1 : a.remote_id > b.remote_id ? 1 : 0),
    )
    .slice(0, limit);
}
