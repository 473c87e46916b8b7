import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import type { NotionIds } from "./targets/notion-target.js";

/*
 * Where the sync engine keeps its state, without loading any store's client: hybrid recall
 * reads these on every remote-asking recall and must not pay for a client it may not use.
 */

/** `.engram/sync/`: queues, id maps, recorded database ids, the log. Never on main. */
export function syncDir(ctx: RepoContext): string {
  return join(ctx.paths.root, "sync");
}

export function recordedIdsPath(ctx: RepoContext): string {
  return join(syncDir(ctx), "notion", "databases.json");
}

export function readRecordedIds(ctx: RepoContext): NotionIds {
  const path = recordedIdsPath(ctx);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, "utf8")) as NotionIds;
  } catch {
    return {};
  }
}
