import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { isRemovedItem } from "../core/sync/markdown.js";
import { outgoingPublic } from "../core/sync/outgoing.js";
import { enqueue, forgetSent, planDue, type QueueRecord } from "../core/sync/queue.js";
import type { MarkdownReport } from "../sources/markdown.js";
import { gatherCandidates } from "./run-sources.js";
import { openTarget, queueStore, scheduleOf, type TargetName } from "./service.js";
import type { TanaInputs } from "./tana-service.js";
import { tanaCandidates, tanaRemovals } from "./tana-service.js";
import { GraphitiTarget } from "./targets/graphiti-target.js";

export interface PlannedSend {
  key: string;
  title: string;
  action: "create" | "update" | "remove";
  /** The markdown file behind the item, when it is one. */
  file: string | null;
  /** `add_memory` calls it takes (the knowledge graph splits long bodies). */
  parts: number | null;
}

export interface DryRunReport {
  target: TargetName;
  dry_run: true;
  would_send: PlannedSend[];
  /** Sensitive items that would wait for approval. */
  awaiting_approval: string[];
  markdown: MarkdownReport | null;
}

/**
 * `sync run --dry-run`: what the next run would send, computed from the queue on disk and the
 * sources, with no call to the store and nothing written (the queue is changed in memory only).
 */
export async function syncDryRun(
  ctx: RepoContext,
  target: TargetName,
  options: { all?: boolean; tana?: TanaInputs } = {},
): Promise<DryRunReport> {
  const now = receiptTime();
  const loaded = queueStore(ctx, target).load();
  const gathered =
    target === "tana"
      ? await tanaCandidates(ctx, loaded, options.tana ?? {})
      : await gatherCandidates(ctx, target, loaded, options.all === true);
  const keys = gathered.candidates.map((c) => `${c.item.type}:${c.item.local_id}`);
  const queue = options.all === true ? forgetSent(loaded, keys) : loaded;
  const queued = enqueue(queue, gathered.candidates, now).queue;
  const plan = planDue(queued, scheduleOf(ctx), now, true);
  // Built, never connected: only its episode shaping is used.
  const shaper = target === "graphiti" ? openTarget(ctx, target) : null;
  const would_send = plan.due.map((key) => {
    const record = queued.records[key] as QueueRecord;
    const file = record.item.fields.file;
    const removed = isRemovedItem(record.item.fields);
    return {
      key,
      title: record.item.title,
      action: removed ? "remove" : record.remote_id !== null ? "update" : "create",
      file: typeof file === "string" ? file : null,
      parts:
        shaper instanceof GraphitiTarget && !removed && record.privacy === "public"
          ? shaper.partsOf(outgoingPublic(record.item, record.content_hash)).length
          : null,
    } satisfies PlannedSend;
  });
  if (target === "tana") would_send.push(...tanaRemovals(loaded.mapping, new Set(keys)));
  return {
    target,
    dry_run: true,
    would_send,
    awaiting_approval: plan.awaiting_approval,
    markdown: gathered.markdown,
  };
}
