import type { Engram } from "../../schema/engram.js";
import { withoutReplaced } from "../graph/supersession.js";
import type { SyncCandidate } from "./item.js";
import { insightCandidates, type SourceOptions } from "./sources.js";

/*
 * A store that can take an item out (the knowledge graph deletes its episodes) is told when an
 * insight it holds was replaced: the current side is an item of its own, and the old side,
 * no longer true, should not stay beside it. Pure.
 */

/** The insight ids only the replaced side of a supersession states (none without one). */
export function replacedInsightIds(engrams: readonly Engram[], options: SourceOptions): string[] {
  if (!engrams.some((e) => (e.replaces?.length ?? 0) > 0)) return [];
  const none = new Set<string>();
  const ids = (list: readonly Engram[]) =>
    insightCandidates(list, options, none).map((c) => c.item.local_id);
  const current = new Set(ids(withoutReplaced(engrams)));
  return ids(engrams).filter((id) => !current.has(id));
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
