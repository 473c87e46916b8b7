import { join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import type { MappingEntry } from "../core/sync/queue.js";
import { tanaAccess } from "../core/trust/destinations.js";
import { EMPTY_REGISTRY } from "../schema/empty-registry.js";
import type { Registry } from "../schema/registry.js";
import type { QueueStore } from "./queue-store.js";
import { syncDir } from "./state-paths.js";
import { schemaFromMapping } from "./targets/tana-schema.js";
import { TanaTarget } from "./targets/tana-target.js";

/**
 * The Tana target with the schema ids recorded in its queue's mapping. The registry names the
 * people and projects to link (the caller loads it: `config/registry.toml`); without it no
 * entity is linked.
 */
export function openTanaTarget(
  ctx: RepoContext,
  mapping: Readonly<Record<string, MappingEntry>>,
  registry: Registry = EMPTY_REGISTRY,
  store?: QueueStore,
): TanaTarget {
  const configured = ctx.config.sync.tana;
  // Where the requests go and which tokens they carry: the environment's choice, not the repository's.
  const { input, local } = tanaAccess(configured, trustOf(ctx));
  const config = {
    ...configured,
    endpoint: input.url,
    token_env: input.tokenVar,
    local_api_url: local?.url,
    local_token_env: local?.tokenVar ?? configured.local_token_env,
  };
  return new TanaTarget({
    config,
    token: input.token,
    localToken: local?.token ?? "",
    registry,
    schema: schemaFromMapping(mapping, {
      learning: config.learning_tag,
      proposal: config.proposal_tag,
    }),
    clock: receiptTime,
    // When each node was written: the Local API's search may not show a new one yet.
    syncedAt: writtenAt(mapping),
    // Which parts of long content reached Tana: beside the queue, in the state folder.
    partsPath: join(syncDir(ctx), "tana", "parts.json"),
    mapping,
    // An init's progress, durable call by call (the queue's journal).
    ...(store !== undefined ? { recordSchemaProgress: recordIn(store) } : {}),
  });
}

/** Adds mapping entries to the queue's journal now. */
export function recordIn(store: QueueStore): (entries: Record<string, MappingEntry>) => void {
  return (entries) => {
    const q = store.load();
    store.commit({ ...q, mapping: { ...q.mapping, ...entries } }, Object.keys(entries));
  };
}

/** When each mapped node was written, by its id. */
export function writtenAt(mapping: Readonly<Record<string, MappingEntry>>): Map<string, string> {
  return new Map(Object.values(mapping).map((m) => [m.remote_id, m.synced_at]));
}
