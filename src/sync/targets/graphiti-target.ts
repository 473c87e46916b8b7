import { type EpisodePart, episodeParts, searchQuery } from "../../core/sync/graphiti-episode.js";
import { isRemovedItem } from "../../core/sync/markdown.js";
import type { OutgoingItem } from "../../core/sync/outgoing.js";
import { SYNC_TYPES, type SyncType } from "../../core/sync/policy.js";
import type { GraphitiSyncConfig } from "../../schema/config.js";
import { GraphitiClient } from "./graphiti-client.js";
import {
  type SchemaReport,
  type SyncTarget,
  SyncTargetError,
  type TargetHealth,
} from "./target.js";

export interface GraphitiTargetOptions {
  config: GraphitiSyncConfig;
  /** First retry delay in ms (tests shorten it). */
  backoffMs?: number;
  /** How often `get_episodes` is asked while waiting for a queued episode. */
  pollMs?: number;
  /**
   * `sync run --all`: an item already delivered is sent again, its earlier episodes deleted
   * first, instead of being confirmed as listed.
   */
  resend?: boolean;
  /**
   * The groups this project writes (the config's, and its markdown folders'): the only groups
   * whose episodes a send may add or delete. Default: `config.groups`.
   */
  ownGroups?: readonly string[];
}

interface ListedEpisode {
  uuid?: string;
  name?: string;
  content?: string;
  group_id?: string;
  source_description?: string;
}

/** Most episodes asked of `get_episodes` when looking for ours (newest first on the server). */
const LISTING = 500;

/**
 * A Graphiti MCP knowledge graph as a sync target. `add_memory` only queues (the server may
 * still drop the episode), so `upsert` succeeds only once `get_episodes` lists every part; until
 * then it fails as "unavailable" and the engine keeps the item pending and retries it.
 * The remote id is the comma-joined part uuids, so a changed item can delete what it replaces.
 */
export class GraphitiTarget implements SyncTarget {
  readonly name = "graphiti";
  private readonly client: GraphitiClient;
  private readonly pollMs: number;
  /** Keys the engine looked up: their next upsert checks the server before sending. */
  private readonly lookups = new Set<string>();
  private readonly ownGroups: readonly string[];
  private readonly warnings: string[] = [];

  constructor(private readonly options: GraphitiTargetOptions) {
    const c = options.config;
    this.client = new GraphitiClient({
      url: c.url,
      timeoutMs: c.timeout_seconds * 1000,
      retries: c.retries,
      ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    });
    this.pollMs = options.pollMs ?? 250;
    this.ownGroups = [...new Set(options.ownGroups ?? Object.values(c.groups))];
  }

  takeWarnings(): string[] {
    return this.warnings.splice(0);
  }

  async health(): Promise<TargetHealth> {
    const started = performance.now();
    const timeout = this.options.config.health_timeout_seconds * 1000;
    const schema: TargetHealth["schema"] = {};
    for (const type of SYNC_TYPES) schema[type] = "ok";
    const base = { rate_limit: null, schema };
    try {
      const status = (await withTimeout(
        this.client.call("get_status", {}, timeout),
        timeout,
        "get_status",
      )) as { status?: string; message?: string } | null;
      await this.httpHealth(timeout);
      const ok = status?.status === "ok";
      return {
        ...base,
        healthy: ok,
        error: ok ? null : "unavailable",
        message: ok ? null : `get_status: ${status?.message ?? JSON.stringify(status)}`,
        latency_ms: Math.round(performance.now() - started),
      };
    } catch (error) {
      const failure = error as SyncTargetError;
      return {
        ...base,
        healthy: false,
        error: failure.kind ?? "unavailable",
        message: failure.message,
        latency_ms: Math.round(performance.now() - started),
      };
    }
  }

  /** `GET /health` when the server has it (Graphiti does); a 404 means "not offered". */
  private async httpHealth(timeoutMs: number): Promise<void> {
    const response = await fetch(new URL("/health", this.options.config.url), {
      signal: AbortSignal.timeout(timeoutMs),
    }).catch(() => null);
    if (response === null || response.status === 404) return;
    if (!response.ok) {
      throw new SyncTargetError(`GET /health answered ${response.status}`, "unavailable");
    }
  }

  /** Nothing to create: groups come to be with their first episode. Checks the group names. */
  async ensureSchema(): Promise<SchemaReport> {
    return { created: [], validated: [...SYNC_TYPES], ids: {} };
  }

  async upsert(item: OutgoingItem, remoteId: string | null): Promise<string> {
    if (item.encrypted) {
      // A graph of ciphertext is worthless and its extraction would run an LLM over it.
      throw new SyncTargetError(
        `${item.key}: sensitive items are not sent to a knowledge graph`,
        "validation",
      );
    }
    if (isRemovedItem(item.fields)) {
      // A removed markdown file: its episodes are deleted; nothing stands for it any more.
      if (remoteId !== null) await this.archive(remoteId);
      return "";
    }
    const parts = this.partsOf(item);
    const group = (parts[0] as EpisodePart).group_id;
    if (!this.ownGroups.includes(group)) {
      throw new SyncTargetError(
        `${item.key}: group "${group}" is not one of this project's Graphiti groups (${this.ownGroups.join(", ")}): not sent`,
        "validation",
      );
    }
    if (this.options.resend === true && remoteId !== null) await this.archive(remoteId);
    // What the server holds matters only when an earlier send may have reached it: an update,
    // or a record the engine looks up (in flight at a crash, or failed before).
    const recheck = remoteId !== null || this.lookups.delete(item.key);
    let listed = recheck ? await this.listed(group) : [];
    for (const part of parts) {
      // Graphiti reads a given uuid as "load this episode" and fails on a new one: the part's
      // own id travels in source_description instead, and the server names the episode.
      const { uuid: _, ...call } = part;
      // Never retried blindly: an add whose answer was lost may be queued; the engine looks
      // the item up (findByKey) before it sends again.
      if (findListed(listed, part) === undefined) {
        await this.client.call("add_memory", call, undefined, { idempotent: false });
      }
    }
    const deadline = performance.now() + this.options.config.confirm_wait_seconds * 1000;
    // A local server lists an episode within tens of ms: ask soon, then back off to pollMs.
    let wait = Math.min(25, this.pollMs);
    while (!parts.every((p) => findListed(listed, p) !== undefined)) {
      if (performance.now() >= deadline) {
        const missing = parts.filter((p) => findListed(listed, p) === undefined).length;
        throw new SyncTargetError(
          `${item.key}: ${missing} of ${parts.length} episode part(s) queued but not yet listed by get_episodes; pending`,
          "unavailable",
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, this.pollMs);
      listed = await this.listed(group);
    }
    const id = parts.map((p) => findListed(listed, p)?.uuid ?? p.uuid).join(",");
    if (remoteId !== null && remoteId !== id) await this.removeSuperseded(remoteId, id);
    return id;
  }

  /**
   * The episodes of an item whose last send's outcome is unknown: the server's uuids when
   * `get_episodes` lists every part (by the part's ref), else null. Either way the next
   * `upsert` of the key lists the group first and sends only the parts still missing.
   */
  async findByKey(_type: SyncType, key: string, item?: OutgoingItem): Promise<string | null> {
    this.lookups.add(key);
    if (item === undefined || item.encrypted || isRemovedItem(item.fields)) return null;
    const parts = this.partsOf(item);
    const listed = await this.listed((parts[0] as EpisodePart).group_id);
    const found = parts.map((p) => findListed(listed, p)?.uuid);
    return found.every((u) => u !== undefined) ? found.join(",") : null;
  }

  /**
   * Deletes the episodes of an earlier version of an item (the new version supersedes them).
   * The uuids come from the state folder, which a branch may have restored: only an episode
   * `get_episodes` lists in one of this project's groups is deleted; any other is left alone
   * and the run says so.
   */
  async archive(remoteId: string): Promise<void> {
    const uuids = remoteId.split(",").filter(Boolean);
    if (uuids.length === 0) return;
    const ours = new Set((await this.listed(...this.ownGroups)).map((e) => e.uuid));
    for (const uuid of uuids) {
      if (!ours.has(uuid)) {
        this.warnings.push(
          `graphiti: episode ${uuid} is not listed in this project's groups (${this.ownGroups.join(", ")}): not deleted (gone already, or another group's: was the state folder restored from another branch?)`,
        );
        continue;
      }
      await this.client.call("delete_episode", { uuid }).catch((error: unknown) => {
        // Already gone (deleted by hand, or by an earlier run that crashed after it): done.
        if (!(error instanceof SyncTargetError && /not found/i.test(error.message))) throw error;
      });
    }
  }

  async searchNodes(query: string, groupIds: readonly string[], max = 10): Promise<unknown> {
    return this.client.call("search_nodes", {
      query: searchQuery(query, this.options.config.backend),
      group_ids: [...groupIds],
      max_nodes: max,
    });
  }

  async searchFacts(query: string, groupIds: readonly string[], max = 10): Promise<unknown> {
    return this.client.call("search_memory_facts", {
      query: searchQuery(query, this.options.config.backend),
      group_ids: [...groupIds],
      max_facts: max,
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** The `add_memory` calls for an item, for a dry run as well as for a send. */
  partsOf(item: OutgoingItem): EpisodePart[] {
    const text = (name: string): string | null => {
      const v = item.fields[name];
      return typeof v === "string" && v !== "" ? v : null;
    };
    const groups = this.options.config.groups;
    const kind = text("kind");
    const group =
      text("group_id") ??
      (kind === "learning" || kind === "research" ? groups[kind] : groups.engram);
    const provenance = text("source_description") ?? `engram ${item.type} ${item.local_id}`;
    try {
      return episodeParts({
        title: item.title,
        body: item.content,
        group_id: group,
        source_description: `${provenance} | key: ${item.key} | ${item.content_hash}`,
        reference_time:
          text("timestamp") ?? text("last_seen") ?? text("discovered") ?? text("first_seen") ?? "",
        content_hash: item.content_hash,
      }).map((p) => {
        const tagged = { ...p, source_description: `${p.source_description} | ref: ${p.uuid}` };
        return p.reference_time === "" ? withoutTime(tagged) : tagged;
      });
    } catch (error) {
      throw new SyncTargetError(`${item.key}: ${(error as Error).message}`, "validation");
    }
  }

  private async listed(...groups: string[]): Promise<ListedEpisode[]> {
    const value = (await this.client.call("get_episodes", {
      group_ids: groups,
      max_episodes: LISTING,
    })) as { episodes?: ListedEpisode[] } | ListedEpisode[] | null;
    if (Array.isArray(value)) return value;
    return value?.episodes ?? [];
  }

  private async removeSuperseded(remoteId: string, id: string): Promise<void> {
    const keep = new Set(id.split(","));
    const old = remoteId.split(",").filter((u) => u !== "" && !keep.has(u));
    if (old.length > 0) await this.archive(old.join(","));
  }
}

/** The server's episode for a part: by the ref in its provenance, or by name and body. */
function findListed(
  listed: readonly ListedEpisode[],
  part: EpisodePart,
): ListedEpisode | undefined {
  const ref = `ref: ${part.uuid}`;
  return listed.find(
    (e) =>
      e.uuid === part.uuid ||
      (e.source_description ?? "").endsWith(ref) ||
      (e.name === part.name && e.content === part.episode_body),
  );
}

function withoutTime(part: EpisodePart): EpisodePart {
  const { reference_time: _, ...rest } = part;
  return rest as EpisodePart;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SyncTargetError(`${what}: no answer within ${ms} ms`, "unavailable")),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
