import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { emptyCatalog } from "../core/model/engram.js";
import type { ProposalRefs } from "../core/proposal/plan.js";
import { type MemoryFiles, MissingProposalFile, replay } from "../core/proposal/replay.js";
import { StateError } from "../errors.js";
import { type GitRepo, mergeBase } from "../git/history.js";
import { PathConfiner } from "../repo/confine.js";
import { catalogAt, memoryFilesAt } from "../repo/memory-at.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import { Catalog } from "../schema/engram.js";
import { forEachLimited, writeFileAtomic, writeFileAtomicSync } from "../state/atomic.js";
import type { StatePaths } from "../state/paths.js";

/**
 * The staging tree of `director run --pr`: the memory files of the proposal being built, in
 * the state folder, never in the user's work tree. Cycles compact into it exactly as they
 * do into a work tree (with the same crash-safe intent); its content is then committed on
 * the engram branch. While `dirty`, it holds compacted events that are on no branch yet.
 */
export interface StagingMeta {
  /** The folder (in the state folder) holding the tree: a rebuild writes a new one. */
  dir: string;
  /** The main commit and the engram-branch head the tree was built from. */
  main: string;
  branch: string | null;
  /** How many engrams were rejected when it was built: a new rejection rebuilds it. */
  rejected: number;
  /** The catalog it was built from: the base against which its own changes are replayed. */
  start_catalog: Catalog;
  /** A cycle changed it and the result is not pushed yet. */
  dirty: boolean;
  /**
   * The branch got it without some items (held or rejected, `withholdItems`): a rebuild
   * replays the tree on the branch even when clean, so a held item is kept for its release.
   */
  withheld?: boolean;
}

export function stagingDir(paths: StatePaths, meta: Pick<StagingMeta, "dir">): string {
  return join(paths.root, meta.dir);
}

function metaPath(paths: StatePaths): string {
  return join(paths.root, "staging.json");
}

export function readStagingMeta(paths: StatePaths): StagingMeta | undefined {
  const path = metaPath(paths);
  if (!existsSync(path)) return undefined;
  try {
    const meta = JSON.parse(readFileSync(path, "utf8")) as StagingMeta;
    return { ...meta, start_catalog: Catalog.parse(meta.start_catalog) as Catalog };
  } catch (error) {
    throw new StateError(
      `${path}: unreadable (${(error as Error).message}); move it away to rebuild the staging tree from git`,
    );
  }
}

export function writeStagingMeta(paths: StatePaths, meta: StagingMeta): void {
  writeFileAtomicSync(metaPath(paths), `${JSON.stringify(meta)}\n`);
}

/** The memory files of a commit (catalog, engrams, MEMORY.md), read from git objects. */
/** The staging tree's files (see `readMemoryFiles`): what a proposal commits. */
export async function readStagingFiles(dir: string): Promise<MemoryFiles> {
  return readMemoryFiles(dir);
}

/**
 * Writes `files` as a new staging tree beside the current one and returns its folder name.
 * Nothing changes until the caller writes the meta naming it (one atomic rename), so a crash
 * mid-rebuild leaves the old tree and its meta, dirty content included, untouched.
 */
export async function writeStagingTree(
  paths: StatePaths,
  files: ReadonlyMap<string, string>,
): Promise<string> {
  const name = `staging-${Date.now().toString(36)}-${process.pid}`;
  const dir = join(paths.root, name);
  // Paths read from a branch's tree: each one confined to the memory files before it is written.
  const confiner = new PathConfiner(dir);
  for (const path of files.keys()) confiner.resolve(path, "memory", `the tree of ${name}`);
  const folders = new Set([...files.keys()].map((path) => dirname(join(dir, path))));
  for (const folder of folders) mkdirSync(folder, { recursive: true });
  await forEachLimited([...files], 16, ([path, text]) => writeFileAtomic(join(dir, path), text));
  return name;
}

/** Removes staging folders the meta does not name (older trees, and rebuilds cut short). */
export function removeOtherStagingTrees(paths: StatePaths, keep: string | undefined): void {
  if (!existsSync(paths.root)) return;
  for (const entry of readdirSync(paths.root, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name.startsWith("staging-") && entry.name !== keep) {
      rmSync(join(paths.root, entry.name), { recursive: true, force: true });
    }
  }
}

/**
 * The staging tree for this run (`pending`: it may differ from the branch). Reused as it is
 * while main, the branch and the rejections are what it was built from; otherwise rebuilt:
 * the branch's proposal replayed on main, then, if the tree holds a result not pushed yet,
 * that result replayed on top.
 */
export async function prepareStaging(
  ctx: RepoContext,
  repo: GitRepo,
  refs: ProposalRefs,
  rejected: ReadonlySet<string>,
  dryRun: boolean,
): Promise<{ meta: StagingMeta; carried: number; pending: boolean }> {
  const meta = readStagingMeta(ctx.paths);
  const current =
    meta !== undefined &&
    meta.main === refs.main &&
    meta.branch === refs.branch &&
    meta.rejected === rejected.size &&
    existsSync(stagingDir(ctx.paths, meta));
  if (current) {
    removeOtherStagingTrees(ctx.paths, meta.dir);
    if (!dryRun && !meta.dirty) writeStagingMeta(ctx.paths, { ...meta, dirty: true });
    return { meta: { ...meta, dirty: true }, carried: 0, pending: meta.dirty };
  }
  const main = await memoryFilesAt(repo, refs.main);
  let start = main;
  let carried = 0;
  if (refs.branch !== null && refs.branch !== refs.main) {
    const mergedBase = await mergeBase(repo, refs.branch, refs.main);
    if (mergedBase !== refs.branch) {
      const base = mergedBase ? await catalogAt(repo, mergedBase) : emptyCatalog();
      const proposal = await memoryFilesAt(repo, refs.branch);
      const rebased = replayOrFail(base, proposal, start, rejected);
      carried += rebased.carried;
      start = rebased.files;
    }
  }
  let content = start;
  if ((meta?.dirty || meta?.withheld) && existsSync(stagingDir(ctx.paths, meta))) {
    const staged = await readStagingFiles(stagingDir(ctx.paths, meta));
    const rebased = replayOrFail(meta.start_catalog, staged, start, rejected);
    carried += rebased.carried;
    content = rebased.files;
  }
  const dir = await writeStagingTree(ctx.paths, content.files);
  const next: StagingMeta = {
    dir,
    main: refs.main,
    branch: refs.branch,
    rejected: rejected.size,
    start_catalog: start.catalog,
    dirty: !dryRun,
    ...(meta?.withheld ? { withheld: true } : {}),
  };
  writeStagingMeta(ctx.paths, next);
  removeOtherStagingTrees(ctx.paths, dir);
  return { meta: next, carried, pending: true };
}

/** `replay`, its one failure (a proposal missing a file its catalog lists) as a state error. */
function replayOrFail(...args: Parameters<typeof replay>): ReturnType<typeof replay> {
  try {
    return replay(...args);
  } catch (error) {
    if (error instanceof MissingProposalFile) throw new StateError(error.message);
    throw error;
  }
}
