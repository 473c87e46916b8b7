import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { proposedEngramIds } from "../core/proposal/catalog-merge.js";
import type { ProposalRefs } from "../core/proposal/plan.js";
import type { GitRepo } from "../git/history.js";
import { mergeBase } from "../git/history.js";
import { catalogAt } from "../repo/memory-at.js";
import type { Catalog } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { ProposeOptions } from "./propose-types.js";

/** Engrams proposed by pull requests closed unmerged, recorded in the state folder. */
interface Rejections {
  pulls: number[];
  engram_ids: string[];
}

function rejectionsPath(ctx: RepoContext): string {
  return join(ctx.paths.root, "rejected.json");
}

function readRejections(ctx: RepoContext): Rejections {
  const path = rejectionsPath(ctx);
  if (!existsSync(path)) return { pulls: [], engram_ids: [] };
  return JSON.parse(readFileSync(path, "utf8")) as Rejections;
}

/**
 * Propose, confirm, persist: a pull request closed without merging rejects the engrams it
 * proposed, and they are never proposed again.
 */
export async function updateRejections(
  ctx: RepoContext,
  repo: GitRepo,
  refs: ProposalRefs,
  options: ProposeOptions,
): Promise<Set<string>> {
  const known = readRejections(ctx);
  const ids = new Set(known.engram_ids);
  if (!options.pulls) return ids;
  const seen = new Set(known.pulls);
  let changed = false;
  for (const pull of await options.pulls.closedUnmerged(options.branch)) {
    if (seen.has(pull.number)) continue;
    let head: Catalog;
    let base: string | undefined;
    try {
      head = await catalogAt(repo, pull.head_sha);
      base = await mergeBase(repo, pull.head_sha, refs.main);
    } catch {
      continue; // its commit is not here (yet): judged on a later run
    }
    const from = base ? await catalogAt(repo, base) : head;
    for (const id of proposedEngramIds(from, head)) ids.add(id);
    seen.add(pull.number);
    changed = true;
  }
  if (changed) {
    const next: Rejections = {
      pulls: [...seen].sort((a, b) => a - b),
      engram_ids: [...ids].sort(),
    };
    writeFileAtomicSync(rejectionsPath(ctx), `${JSON.stringify(next)}\n`);
  }
  return ids;
}
