import type { SyncItem } from "../../src/core/sync/item.js";

/** A public episode with surprise-worthy figures, for tests and the bench. */
export function episodeItem(id: string, content: string, extra: Partial<SyncItem> = {}): SyncItem {
  return {
    type: "episode",
    local_id: id,
    title: `Episode ${id}`,
    privacy: "public",
    occurred_at: "2026-01-05T10:00:00.000Z",
    fields: {
      confidence: 0.9,
      surprise_score: 0.9,
      outcome: "failure",
      tags: ["a", "b"],
      local_id: id,
    },
    content,
    ...extra,
  };
}
