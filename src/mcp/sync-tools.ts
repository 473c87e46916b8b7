import { z } from "zod";
import type { RepoContext } from "../context/repo-context.js";
import type { ToolSpec } from "./protocol.js";
import { structured } from "./tool-result.js";

/*
 * The sync engine as MCP: what hybrid recall adds to `memory_recall`, and `memory_sync`.
 * The engine and the stores' clients are imported when a call needs them, so a server that
 * only recalls locally never loads them.
 */

const remoteHit = z.object({
  source: z.enum(["notion", "graphiti"]),
  cached: z.boolean(),
  remote_id: z.string(),
  kind: z.string(),
  title: z.string(),
  snippet: z.string(),
  score: z.number(),
  sync_key: z.string().nullable(),
  local_id: z.string().nullable(),
  url: z.string().nullable(),
});

/** The fields hybrid recall adds to `memory_recall`'s answer. */
export const remoteRecallOutput = {
  remote_hits: z.array(remoteHit),
  remote: z.object({
    mode: z.enum(["off", "now", "on_miss", "background"]),
    asked: z.boolean(),
    reason: z.string(),
    targets: z.array(
      z.object({
        target: z.string(),
        state: z.enum(["queried", "cached", "deferred", "unavailable"]),
        hits: z.number().int(),
        message: z.string().nullable(),
        latency_ms: z.number().nullable(),
      }),
    ),
  }),
  notices: z.array(z.string()),
};

type RemotePart = {
  remote_hits: z.infer<typeof remoteHit>[];
  remote: z.infer<typeof remoteRecallOutput.remote>;
  notices: string[];
};

/**
 * The stores' part of a recall, by the caller's stated confidence. A server lives on, so the
 * 0.7+ validation really runs in the background here and fills the cache for the next call.
 */
export async function remoteRecallPart(
  ctx: RepoContext,
  input: {
    query: string;
    confidence?: number | undefined;
    refresh?: boolean | undefined;
    limit?: number | undefined;
  },
  localHits: number,
): Promise<RemotePart> {
  if (input.confidence === undefined) {
    const reason = "no confidence stated: local memory only";
    return {
      remote_hits: [],
      remote: { mode: "off", asked: false, reason, targets: [] },
      notices: [],
    };
  }
  const { remoteRecall } = await import("../sync/hybrid-recall.js");
  const r = await remoteRecall(ctx, {
    query: input.query,
    confidence: input.confidence,
    localHits,
    limit: input.limit ?? 10,
    refresh: input.refresh === true,
    background: "inline",
  });
  return {
    remote_hits: r.hits as RemotePart["remote_hits"],
    remote: { mode: r.mode, asked: r.asked, reason: r.reason, targets: r.targets },
    notices: r.notices,
  };
}

const rate = z.number().nullable();

const syncOutput = z.object({
  action: z.enum(["status", "sync"]),
  target: z.enum(["notion", "graphiti", "tana"]),
  depth: z.object({
    pending: z.number().int(),
    awaiting_approval: z.number().int(),
    failed: z.number().int(),
    synced: z.number().int(),
  }),
  mapped: z.number().int(),
  metrics: z.object({
    sends: z.number().int(),
    success_rate: rate,
    surprise_sync_rate: rate,
    extension_hit_rate: rate,
    average_latency_ms: rate,
    uptime: rate,
  }),
  /** The last health check the engine recorded (a run), not a new call to the store. */
  last_check: z
    .object({ state: z.string(), reason: z.string().nullable(), at: z.string().nullable() })
    .nullable(),
  run: z
    .object({
      mode: z.enum(["online", "local-only"]),
      /** The item asked for, as the queue holds it after the run; null if it was not queued. */
      item: z
        .object({
          key: z.string(),
          state: z.enum(["pending", "failed", "synced"]),
          approval: z.string(),
          remote_id: z.string().nullable(),
          last_error: z.string().nullable(),
        })
        .nullable(),
      sent: z.object({
        created_or_updated: z.number().int(),
        retry_later: z.number().int(),
        failed: z.number().int(),
        skipped: z.number().int(),
      }),
      awaiting_approval: z.array(z.string()),
    })
    .nullable(),
  notices: z.array(z.string()),
});

const syncInput = z.strictObject({
  target: z.enum(["notion", "graphiti", "tana"]).optional().describe("the store (default notion)"),
  id: z.string().min(1).max(200).optional().describe("sync this item now (a local id, or type:id)"),
});

/** `memory_sync`: the queue's state, or one item synced now (`director sync --id ID`). */
export function syncTool(ctx: RepoContext): ToolSpec<typeof syncInput, typeof syncOutput> {
  return {
    name: "memory_sync",
    title: "Sync to an external store",
    description:
      "Without id: the sync queue of a target (pending, awaiting approval, failed, synced) and its metrics, from the state folder. With id (an episode, insight, pattern or memory version id, e.g. ep_...; for tana a learning id, l_...): sync that item now whatever the policy says, as `director sync --id`; private items never leave and sensitive ones wait for approval.",
    input: syncInput,
    output: syncOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    async run(input) {
      const ops = await import("../sync/operations.js");
      const target = input.target ?? "notion";
      const id = input.id;
      // Tana's nodes follow the learning states (`worker learnings`) and link the registry.
      const tana =
        target === "tana" && id !== undefined
          ? await (await import("../graph/learning-states.js")).tanaInputs(ctx, process.env)
          : null;
      const run =
        id === undefined
          ? null
          : await ops.syncRun(ctx, {
              target,
              ids: [id],
              ...(tana ? { registry: tana.registry, learnings: tana.learnings } : {}),
            });
      const q = ops.queueStatus(ctx, target);
      const item = id === undefined ? null : await queuedItem(ctx, target, id);
      const notices = [...(tana?.warnings ?? []), ...(run?.notices ?? [])];
      if (id !== undefined && item === null) {
        notices.push(`${id}: not queued: a private item never leaves this machine`);
      }
      return structured({
        action: run === null ? "status" : "sync",
        target,
        depth: q.depth,
        mapped: q.mapped,
        metrics: q.metrics,
        last_check:
          q.last === null
            ? null
            : { state: q.last.state, reason: q.last.reason, at: q.last.last_check_at },
        run:
          run === null
            ? null
            : {
                mode: run.mode,
                item,
                sent: run.sent,
                awaiting_approval: run.awaiting_approval,
              },
        notices,
      });
    },
  };
}

async function queuedItem(ctx: RepoContext, target: "notion" | "graphiti" | "tana", id: string) {
  const { queueStore } = await import("../sync/service.js");
  const queue = queueStore(ctx, target).peek();
  const r = Object.values(queue.records).find((x) => x.local_id === id || x.key === id);
  if (r === undefined) {
    // Synced earlier with the same content: the record may be gone, the mapping stays.
    const key = Object.keys(queue.mapping).find((k) => k === id || k.endsWith(`:${id}`));
    const mapped = key === undefined ? undefined : queue.mapping[key];
    if (key === undefined || mapped === undefined) return null;
    const state = "synced" as const;
    return { key, state, approval: "none", remote_id: mapped.remote_id, last_error: null };
  }
  return {
    key: r.key,
    state: r.state,
    approval: r.approval,
    remote_id: r.remote_id,
    last_error: r.last_error,
  };
}
