import type { RepoContext } from "../context/repo-context.js";
import { emptyCatalog } from "../core/model/engram.js";
import { replay } from "../core/proposal/replay.js";
import { type GitRepo, mergeBase, resolveCommit } from "../git/history.js";
import { catalogAt } from "../repo/memory-at.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import { readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import {
  readStagingFiles,
  removeOtherStagingTrees,
  type StagingMeta,
  stagingDir,
  writeStagingMeta,
  writeStagingTree,
} from "./staging.js";

/**
 * Memory a cycle wrote into the user's work tree (`memory.publish = "auto"` chose the work
 * tree before anything said pull requests, or it was set to `work-tree`), as `run --pr` found it.
 */
export interface WorkTreeMemory {
  /** Engrams the work tree's catalog lists that its fork point from main (or HEAD) does not. */
  engrams: number;
  /** Of those, carried into this proposal by this run (the others were proposed already). */
  carried: number;
  /** Of those, not proposed again: a pull request proposing them was closed unmerged. */
  rejected: number;
  /** Set when the work tree's memory could not be read (then nothing of it is carried). */
  problem?: string;
}

/**
 * Carries what the work tree's memory changed since it forked from `main` (its new engrams,
 * its evictions; the fork point is HEAD's merge base with main) into the staging tree, as a
 * proposal is carried onto a newer main: so `director run --pr` never answers "nothing to
 * propose" while the work tree holds memory the base lacks. The work tree and index are only
 * read. Undefined when the work tree holds no memory of its own.
 */
export async function carryWorkTreeMemory(
  ctx: RepoContext,
  repo: GitRepo,
  main: string,
  meta: StagingMeta,
  rejected: ReadonlySet<string>,
  dryRun: boolean,
): Promise<{ memory: WorkTreeMemory; meta: StagingMeta } | undefined> {
  const head = await resolveCommit(repo, "HEAD").catch(() => undefined);
  const fork = head === undefined ? undefined : ((await mergeBase(repo, head, main)) ?? head);
  const base = fork === undefined ? emptyCatalog() : await catalogAt(repo, fork);
  // The catalog first: a work tree whose memory is its commit's reads nothing more.
  let tree: Awaited<ReturnType<typeof readMemoryFiles>>;
  try {
    const catalog = await readCatalog(ctx.repoDir);
    if (catalog.hash === base.hash || newEngrams(base, catalog).length === 0) return undefined;
    tree = await readMemoryFiles(ctx.repoDir);
  } catch (error) {
    const problem = `the work tree's memory could not be read (${(error as Error).message}); run director verify there`;
    return { memory: { engrams: 0, carried: 0, rejected: 0, problem }, meta };
  }
  const added = newEngrams(base, tree.catalog);
  const staged = await readStagingFiles(stagingDir(ctx.paths, meta));
  const result = replay(base, tree, staged, rejected);
  const memory: WorkTreeMemory = {
    engrams: added.length,
    carried: result.carried,
    rejected: added.filter((id) => rejected.has(id)).length,
  };
  if (result.carried === 0 || dryRun) return { memory, meta };
  const dir = await writeStagingTree(ctx.paths, result.files.files);
  const next: StagingMeta = { ...meta, dir, dirty: true };
  writeStagingMeta(ctx.paths, next);
  removeOtherStagingTrees(ctx.paths, dir);
  return { memory, meta: next };
}

function newEngrams(base: Catalog, tree: Catalog): string[] {
  const known = new Set(base.entries.map((e) => e.engram_id));
  return tree.entries.map((e) => e.engram_id).filter((id) => !known.has(id));
}

/** What to tell the user of the work tree's memory (empty when there is nothing to say). */
export function workTreeLines(
  memory: WorkTreeMemory | undefined,
  base: string,
  dryRun = false,
): string[] {
  if (memory === undefined) return [];
  if (memory.problem !== undefined) return [`work tree: ${memory.problem}`];
  const lines: string[] = [];
  const held = `the work tree holds ${memory.engrams} engram(s) a cycle wrote there (memory.publish = "auto" chose the work tree before anything said pull requests, or "work-tree")`;
  if (memory.carried > 0 && dryRun) {
    lines.push(
      `${held}; a run without --dry-run carries ${memory.carried} of them into the proposal`,
    );
  } else if (memory.carried > 0) {
    lines.push(
      `${held}; carried ${memory.carried} of them into this proposal`,
      `  the work tree keeps its copies (run --pr never writes there): once the pull request is merged, discard them (git restore memory MEMORY.md; git clean -fd memory) and pull ${base}`,
    );
  } else if (memory.rejected > 0) {
    lines.push(
      `${held}; ${memory.rejected} of them were rejected by closed pull requests and are not proposed again`,
    );
  } else {
    lines.push(`${held}; all of them are proposed already, or on ${base}`);
  }
  return lines;
}
