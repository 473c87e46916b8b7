import type { RepoContext } from "../context/repo-context.js";
import { remoteRecall } from "../sync/hybrid-recall.js";
import type { CommandOutput } from "./args.js";
import type { RemoteRecallFlags } from "./recall-options.js";

/**
 * `worker recall --confidence`: the local answer, then what the stores add. Loaded only when
 * a confidence is stated, so a plain recall never loads the sync engine.
 */
export async function hybridRecallOutput(
  ctx: RepoContext,
  query: string,
  local: readonly { source: "local" }[],
  flags: RemoteRecallFlags & { limit: number },
  localText: string,
): Promise<CommandOutput> {
  const remote = await remoteRecall(ctx, {
    query,
    confidence: flags.confidence,
    localHits: local.length,
    limit: flags.limit,
    refresh: flags.refresh,
    background: "spawn",
  });
  const lines = [
    `remote (${remote.reason}):`,
    ...remote.hits.map(
      (h) =>
        `${h.score.toFixed(3)}  [${h.source}${h.cached ? ", cached" : ""}] ${h.kind} ${h.remote_id}${h.local_id ? ` (${h.local_id})` : ""}\n        ${h.snippet}`,
    ),
    ...remote.targets.map(
      (t) =>
        `  ${t.target}: ${t.state}, ${t.hits} hit(s)${t.latency_ms !== null ? `, ${t.latency_ms} ms` : ""}${t.message ? ` (${t.message})` : ""}`,
    ),
  ];
  const { mode, asked, reason, targets } = remote;
  return {
    json: {
      query,
      confidence: flags.confidence,
      hits: local,
      remote_hits: remote.hits,
      remote: { mode, asked, reason, targets },
      notices: remote.notices,
    },
    text: `${localText}${lines.join("\n")}\n`,
    warnings: remote.notices,
  };
}
