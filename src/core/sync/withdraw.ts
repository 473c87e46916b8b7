import type { Engram } from "../../schema/engram.js";
import type { SyncCandidate } from "./item.js";
import { insightCandidates, type SourceOptions } from "./sources.js";

/*
 * A store that can take an item out (the knowledge graph deletes its episodes) is told when an
 * insight it holds was replaced: the current side is an item of its own, and the old side,
 * no longer true, should not stay beside it. Pure.
 */

/**
 * The insight ids only the replaced side of a supersession states (none without one).
 * `current`: the insight ids `syncCandidates` offered, already the current side only.
 */
export function replacedInsightIds(
  engrams: readonly Engram[],
  options: SourceOptions,
  current: ReadonlySet<string>,
): string[] {
  if (!engrams.some((e) => (e.replaces?.length ?? 0) > 0)) return [];
  return insightCandidates(engrams, options, new Set())
    .map((c) => c.item.local_id)
    .filter((id) => !current.has(id));
}

/**
 * The item that withdraws a replaced insight: its key, so the store finds its copy through the
 * id mapping; the same for every such insight, so it is sent once.
 */
export function withdrawnInsight(localId: string): SyncCandidate {
  return {
    item: {
      type: "insight",
      local_id: localId,
      title: `Replaced insight ${localId}`,
      privacy: "public",
      occurred_at: "1970-01-01T00:00:00.000Z",
      fields: { type: "replaced", status: "removed", local_id: localId },
      content: "",
    },
    verdict: { sync: true, priority: 1, reasons: ["replaced by a later item"] },
  };
}
