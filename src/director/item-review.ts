import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { knowledgeItems } from "../core/proposal/knowledge.js";
import type { ItemDecisions } from "../core/proposal/withhold.js";
import { proposedRecords } from "../core/proposal/withhold-records.js";
import { StateError, UsageError } from "../errors.js";
import { openRepo } from "../git/history.js";
import { catalogAt, knowledgeRecordIdsAt } from "../repo/memory-at.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import type { Engram } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { readStagingMeta } from "./staging.js";

/** What reviewers decided about single items, kept in the state folder (`items.json`). */
interface ItemReviewFile {
  rejected: string[];
  released: string[];
}

/** A knowledge item's id, as the pull-request body shows it. */
export const ITEM_ID = /^l_[0-9a-f]{16}$/;

function reviewPath(ctx: RepoContext): string {
  return join(ctx.paths.root, "items.json");
}

/** The reviewers' decisions on single items; none when the file does not exist. */
export function readItemDecisions(ctx: RepoContext): ItemDecisions {
  const path = reviewPath(ctx);
  if (!existsSync(path)) return { rejected: new Set(), released: new Set() };
  try {
    const file = JSON.parse(readFileSync(path, "utf8")) as ItemReviewFile;
    return { rejected: new Set(file.rejected), released: new Set(file.released) };
  } catch (error) {
    throw new StateError(
      `${path}: unreadable (${(error as Error).message}); it holds the items reviewers rejected or released`,
      { cause: error },
    );
  }
}

function writeItemDecisions(ctx: RepoContext, decisions: ItemDecisions): void {
  const file: ItemReviewFile = {
    rejected: [...decisions.rejected].sort(),
    released: [...decisions.released].sort(),
  };
  writeFileAtomicSync(reviewPath(ctx), `${JSON.stringify(file)}\n`);
}

/** `reject`: never proposed again; `release`: a held item goes on the branch (a rejection is undone). */
export type ItemAction = "reject" | "release";

/**
 * Checks that each id names an item of the staged proposal (not of main: merged memory is set
 * aside with `director set-aside`), then records the decision. Called with the staging tree
 * under the Director lock, before the cycle whose proposal leaves the item out or lets it in.
 */
export async function decideItems(
  ctx: RepoContext,
  staging: string,
  action: ItemAction,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids) {
    if (!ITEM_ID.test(id)) {
      throw new UsageError(
        `${id}: not an item id (l_ and 16 hex digits, shown next to each item in the pull-request body)`,
      );
    }
  }
  const main = readStagingMeta(ctx.paths)?.main;
  const repo = await openRepo(ctx.repoDir);
  const mainCatalog = main === undefined ? undefined : await catalogAt(repo, main);
  const mainIds = new Set((mainCatalog?.entries ?? []).map((e) => e.engram_id));
  const mainRecords =
    main === undefined || mainCatalog === undefined
      ? new Set<string>()
      : await knowledgeRecordIdsAt(repo, main, mainCatalog);
  const staged = await readMemoryFiles(staging);
  const engrams: Engram[] = [];
  for (const entry of staged.catalog.entries) {
    const text = staged.files.get(entry.path);
    if (mainIds.has(entry.engram_id) || text === undefined) continue;
    engrams.push(JSON.parse(text) as Engram);
  }
  // Sessions' knowledge records are items too: a held one is released by the same id.
  const proposed = new Set([
    ...knowledgeItems(engrams).map((item) => item.id),
    ...proposedRecords(staged.catalog, staged.files, mainRecords).map((r) => r.id),
  ]);
  const unknown = ids.filter((id) => !proposed.has(id));
  if (unknown.length > 0) {
    throw new UsageError(
      `${unknown.join(", ")}: no item of the engram proposal has this id (an item already merged is taken out with \`director set-aside ENGRAM_ID\`)`,
    );
  }
  const now = readItemDecisions(ctx);
  const rejected = new Set(now.rejected);
  const released = new Set(now.released);
  for (const id of ids) {
    if (action === "reject") {
      rejected.add(id);
      released.delete(id);
    } else {
      rejected.delete(id);
      released.add(id);
    }
  }
  writeItemDecisions(ctx, { rejected, released });
}
