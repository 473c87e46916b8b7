import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import type { MappingEntry } from "../core/sync/queue.js";
import { EMPTY_REGISTRY } from "../schema/empty-registry.js";
import type { Registry } from "../schema/registry.js";
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
): TanaTarget {
  const config = ctx.config.sync.tana;
  return new TanaTarget({
    config,
    token: process.env[config.token_env] ?? "",
    localToken: process.env[config.local_token_env] ?? "",
    registry,
    schema: schemaFromMapping(mapping, {
      learning: config.learning_tag,
      proposal: config.proposal_tag,
    }),
    clock: receiptTime,
  });
}
