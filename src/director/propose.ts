import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { emptyCatalog, isGitkeepPath, serializeCatalog } from "../core/model/engram.js";
import { proposedEngramIds, rebaseCatalog } from "../core/proposal/catalog-merge.js";
import { buildProposal } from "../core/proposal/proposal.js";
import { type Proposal, renderPrBody, renderPrTitle } from "../core/rendering/pr-body.js";
import { StateError } from "../errors.js";
import {
  branchNameOf,
  type GitRepo,
  mergeBase,
  openRepo,
  readFileAt,
  resolveCommit,
} from "../git/history.js";
import { graftTree, treeOf, writeCommit, writeTextBlob, writeTextTree } from "../git/objects.js";
import {
  compareAndSwapRef,
  fetchBranches,
  PushError,
  pushWithLease,
  remoteExists,
  remoteHeads,
} from "../git/remote.js";
import { CATALOG_PATH, FOCUS_PATH } from "../repo/memory-tree.js";
import type { Catalog, Engram } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { withDirectorState } from "./director-state.js";
import { type RunOptions, type RunResult, runCycleOn } from "./run.js";
import {
  catalogAt,
  type MemoryFiles,
  memoryFilesAt,
  readStagingFiles,
  readStagingMeta,
  removeOtherStagingTrees,
  type StagingMeta,
  stagingDir,
  writeStagingMeta,
  writeStagingTree,
} from "./staging.js";

/** The pull-request side of a proposal (GitHub, or the local test server). */
export interface PullRequestPort {
  /** Pull requests of the head branch closed without merging, with the commit each proposed. */
  closedUnmerged(head: string): Promise<{ number: number; head_sha: string }[]>;
  upsert(pr: {
    head: string;
    base: string;
    title: string;
    body: string;
  }): Promise<{ number: number; url: string; created: boolean }>;
}

/** Commits files on a branch through an API instead of a git push (compare-and-swap on the branch). */
export type ApiCommitter = (req: {
  branch: string;
  parent: string;
  files: { path: string; content: string | null }[];
  message: string;
  expected: string | null;
}) => Promise<{ moved: boolean; sha: string | null }>;

export interface ProposeOptions extends RunOptions {
  /** The remote to push to (default origin); without it the branch is only committed locally. */
  remote: string;
  /** The branch memory is proposed against. */
  base: string;
  /** The machine-owned branch holding the proposal. */
  branch: string;
  pulls?: PullRequestPort | null;
  /** A link to a file on the head branch, for the pull request body. */
  fileUrl?: (path: string) => string;
  /**
   * The Git Data API route for the commit: used instead of `git push` when `preferApi`, and
   * as the fallback when the push is refused for any reason but a lost race.
   */
  apiCommit?: ApiCommitter;
  preferApi?: boolean;
}

export type ProposalStatus =
  | "created"
  | "updated"
  | "regenerated"
  | "unchanged"
  | "nothing-to-propose"
  | "dry-run";

export interface ProposalResult {
  status: ProposalStatus;
  branch: string;
  base: string;
  remote: string | null;
  main_sha: string;
  /** The engram branch after this run (null when there is none). */
  head_sha: string | null;
  previous_head_sha: string | null;
  pushed: boolean;
  /** How the branch got there: a git push, the Git Data API, or only a local commit. */
  via: "git" | "api" | "local" | null;
  /** Push attempts: more than one when another Director moved the branch first. */
  attempts: number;
  /** Engrams of the previous proposal carried onto a newer main. */
  carried: number;
  /** Engrams not proposed again because a pull request proposing them was closed unmerged. */
  rejected: number;
  pr: { number: number; url: string; created: boolean } | null;
  /** With no GitHub configured: the pull request that would have been opened. */
  would_open: { title: string; body: string } | null;
  /** What the pull request proposes against main (null when there is no branch). */
  review: Proposal | null;
}

const MAX_ATTEMPTS = 5;

const AUTHOR = { name: "engram director", email: "director@engram.invalid" };

/**
 * `director run --pr`: one Director cycle whose result is proposed as a commit on the
 * machine-owned engram branch, never in the user's work tree or index. The branch is rebuilt
 * on the current main whenever main moved (so it never reverts newer memory), the remote
 * branch moves only by compare-and-swap (an older run never overwrites a newer one), and
 * compacted events wait in the staging tree until a push holds them, so a failed push or a
 * crash loses nothing and the next run converges to the same branch.
 */
export async function runProposal(
  ctx: RepoContext,
  options: ProposeOptions,
): Promise<{ run: RunResult; proposal: ProposalResult }> {
  const repo = await openRepo(ctx.repoDir);
  if ((await branchNameOf(repo, "HEAD")) === options.branch) {
    throw new StateError(
      `${options.branch} is checked out in ${repo.dir}: the Director owns that branch; check out another one`,
    );
  }
  const remote = (await remoteExists(repo.dir, options.remote)) ? options.remote : null;
  return withDirectorState(ctx, async (buffer) => {
    let previous: string | null = null;
    for (let attempt = 1; ; attempt++) {
      const refs = await readRefs(repo, remote, options);
      if (attempt === 1) previous = refs.branch;
      const rejected = await updateRejections(ctx, repo, refs, options);
      const staging = await prepareStaging(ctx, repo, refs, rejected, options.dryRun === true);
      const dir = stagingDir(ctx.paths, staging.meta);
      const run = await runCycleOn({ ...ctx, repoDir: dir }, buffer, options);
      const base = {
        branch: options.branch,
        base: options.base,
        remote,
        main_sha: refs.main,
        previous_head_sha: previous,
        attempts: attempt,
        carried: staging.carried,
        rejected: rejected.size,
        pr: null,
        would_open: null,
        review: null,
      };
      if (options.dryRun) {
        return {
          run,
          proposal: { ...base, status: "dry-run", head_sha: refs.branch, pushed: false, via: null },
        };
      }
      const idle = !staging.pending && !run.changed && run.focus === null;
      if (idle && (refs.branch === null || !options.pulls)) {
        // Nothing new since the last push, the refs are where they were, no PR to see to.
        const status = refs.branch === null ? "nothing-to-propose" : "unchanged";
        writeStagingMeta(ctx.paths, { ...staging.meta, dirty: false });
        return {
          run,
          proposal: { ...base, status, head_sha: refs.branch, pushed: false, via: null },
        };
      }
      const files = await readStagingFiles(dir);
      const built = await buildCommit(repo, refs, files, staging.meta.start_catalog);
      if (built.kind !== "commit") {
        writeStagingMeta(ctx.paths, { ...staging.meta, dirty: false });
        const status = built.kind === "same-as-main" ? "nothing-to-propose" : "unchanged";
        const proposal: ProposalResult = {
          ...base,
          status,
          head_sha: refs.branch,
          pushed: false,
          via: null,
        };
        if (status === "unchanged" && refs.branch !== null) {
          Object.assign(
            proposal,
            await openPullRequest(repo, refs, files, rejected.size, ctx, options),
          );
        }
        return { run, proposal };
      }
      const published = await publish(repo, remote, refs, built, files, options);
      if (published.moved) {
        // Another Director moved the branch first: rebuild on its proposal and try again.
        if (attempt >= MAX_ATTEMPTS) {
          throw new StateError(
            `${options.branch}: moved by another writer ${attempt} times in a row; the proposal stays staged for the next run`,
          );
        }
        continue;
      }
      writeStagingMeta(ctx.paths, {
        ...staging.meta,
        branch: published.sha,
        start_catalog: files.catalog,
        dirty: false,
      });
      const status: ProposalStatus =
        refs.branch === null ? "created" : built.parent === refs.branch ? "updated" : "regenerated";
      const proposal: ProposalResult = {
        ...base,
        status,
        head_sha: published.sha,
        pushed: published.via !== "local",
        via: published.via,
      };
      Object.assign(
        proposal,
        await openPullRequest(
          repo,
          { ...refs, branch: published.sha },
          files,
          rejected.size,
          ctx,
          options,
        ),
      );
      return { run, proposal };
    }
  });
}

interface Refs {
  main: string;
  branch: string | null;
}

type Published = { moved: true } | { moved: false; sha: string; via: "git" | "api" | "local" };

/**
 * Puts the built commit on the branch: `git push` under a lease, or the Git Data API (the
 * same files, one tree), or, with no remote, the local branch only. The local branch then
 * follows by git's compare-and-swap.
 */
async function publish(
  repo: GitRepo,
  remote: string | null,
  refs: Refs,
  built: { sha: string; parent: string },
  files: MemoryFiles,
  options: ProposeOptions,
): Promise<Published> {
  let sha = built.sha;
  let via: "git" | "api" | "local" = remote === null ? "local" : "git";
  if (remote !== null && !(options.preferApi && options.apiCommit)) {
    try {
      const pushed = await pushWithLease(repo.dir, remote, options.branch, sha, refs.branch);
      if (!pushed.pushed) return { moved: true };
    } catch (error) {
      if (!(error instanceof PushError) || !options.apiCommit) throw error;
      via = "api";
    }
  } else if (options.apiCommit) {
    via = "api";
  }
  if (via === "api" && options.apiCommit) {
    const parent = await memoryFilesAt(repo, built.parent);
    const changes: { path: string; content: string | null }[] = [];
    for (const [path, text] of files.files) {
      if (parent.files.get(path) !== text)
        changes.push({ path: `${repo.prefix}${path}`, content: text });
    }
    for (const path of parent.files.keys()) {
      if (!files.files.has(path)) changes.push({ path: `${repo.prefix}${path}`, content: null });
    }
    const r = await options.apiCommit({
      branch: options.branch,
      parent: built.parent,
      files: changes.sort((a, b) => (a.path < b.path ? -1 : 1)),
      message: commitMessage(files.catalog),
      expected: refs.branch,
    });
    if (r.moved) return { moved: true };
    if (r.sha === null) throw new StateError(`${options.branch}: the API commit changed nothing`);
    sha = r.sha;
    // The API made its own commit: fetch it, so the local branch can point at it.
    if (remote !== null) await fetchBranches(repo.dir, remote, [options.branch]);
  }
  const local = await localBranch(repo, options.branch);
  const swapped = await compareAndSwapRef(repo.dir, `refs/heads/${options.branch}`, sha, local);
  if (!swapped && via === "local") return { moved: true };
  return { moved: false, sha, via };
}

async function readRefs(
  repo: GitRepo,
  remote: string | null,
  options: ProposeOptions,
): Promise<Refs> {
  if (remote === null) {
    return {
      main: await resolveCommit(repo, options.base),
      branch: await localBranch(repo, options.branch),
    };
  }
  const heads = await remoteHeads(repo.dir, remote, [options.base, options.branch]);
  await fetchBranches(repo.dir, remote, [...heads.keys()]);
  const main = heads.get(options.base);
  if (main === undefined) {
    throw new StateError(`${remote} has no branch ${options.base} to propose memory against`);
  }
  return { main, branch: heads.get(options.branch) ?? null };
}

async function localBranch(repo: GitRepo, branch: string): Promise<string | null> {
  try {
    return await resolveCommit(repo, `refs/heads/${branch}`);
  } catch {
    return null;
  }
}

/**
 * The staging tree for this run (`pending`: it may differ from the branch). Reused as it is
 * while main, the branch and the rejections are what it was built from; otherwise rebuilt:
 * the branch's proposal replayed on main, then, if the tree holds a result not pushed yet,
 * that result replayed on top.
 */
async function prepareStaging(
  ctx: RepoContext,
  repo: GitRepo,
  refs: Refs,
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
      const rebased = replay(base, proposal, start, rejected);
      carried += rebased.carried;
      start = rebased.files;
    }
  }
  let content = start;
  if (meta?.dirty && existsSync(stagingDir(ctx.paths, meta))) {
    const staged = await readStagingFiles(stagingDir(ctx.paths, meta));
    const rebased = replay(meta.start_catalog, staged, start, rejected);
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
  };
  writeStagingMeta(ctx.paths, next);
  removeOtherStagingTrees(ctx.paths, dir);
  return { meta: next, carried, pending: true };
}

/** `proposal`'s changes since `base`, replayed on `onto`: catalog and files. */
function replay(
  base: Catalog,
  proposal: MemoryFiles,
  onto: MemoryFiles,
  rejected: ReadonlySet<string>,
): { files: MemoryFiles; carried: number } {
  const rebased = rebaseCatalog({ base, proposal: proposal.catalog, onto: onto.catalog, rejected });
  if (!rebased.changed) return { files: onto, carried: 0 };
  const files = new Map<string, string>();
  const keep = new Set(rebased.catalog.entries.map((e) => e.path));
  for (const [path, text] of onto.files) {
    const kept = path === CATALOG_PATH || path === FOCUS_PATH || isGitkeepPath(path);
    if (kept || keep.has(path)) files.set(path, text);
  }
  for (const entry of rebased.carried) {
    const text = proposal.files.get(entry.path);
    if (text === undefined) {
      throw new StateError(`${entry.path}: listed by the proposal's catalog but missing from it`);
    }
    files.set(entry.path, text);
  }
  files.set(CATALOG_PATH, serializeCatalog(rebased.catalog));
  // MEMORY.md still describes the old catalog: the cycle that follows renders it anew.
  return { files: { catalog: rebased.catalog, files }, carried: rebased.carried.length };
}

type Built =
  | { kind: "same-as-main" }
  | { kind: "same-as-branch" }
  | { kind: "commit"; sha: string; parent: string };

/**
 * The proposal as a commit: main's tree with `memory/` and MEMORY.md replaced. Its parent is
 * the branch when the branch already holds main and the staging tree grew from it (a plain
 * update); otherwise main (the branch is regenerated). It is never main itself.
 */
async function buildCommit(
  repo: GitRepo,
  refs: Refs,
  files: MemoryFiles,
  startCatalog: Catalog,
): Promise<Built> {
  const memory = [...files.files]
    .filter(([path]) => path.startsWith("memory/"))
    .map(([path, text]) => ({ path: path.slice("memory/".length), text }));
  const grafts = new Map<string, { type: "blob" | "tree"; oid: string } | null>();
  grafts.set(`${repo.prefix}memory`, { type: "tree", oid: await writeTextTree(repo, memory) });
  const focus = files.files.get(FOCUS_PATH);
  if (focus !== undefined) {
    grafts.set(`${repo.prefix}${FOCUS_PATH}`, {
      type: "blob",
      oid: await writeTextBlob(repo, focus),
    });
  }
  const mainTree = await treeOf(repo, refs.main);
  const tree = await graftTree(repo, mainTree, grafts);
  if (tree === mainTree) return { kind: "same-as-main" };
  if (refs.branch !== null && (await treeOf(repo, refs.branch)) === tree) {
    return { kind: "same-as-branch" };
  }
  const onMain =
    refs.branch !== null && (await mergeBase(repo, refs.branch, refs.main)) === refs.main;
  const grown = onMain && (await catalogAt(repo, refs.branch as string)).hash === startCatalog.hash;
  const parent = grown ? (refs.branch as string) : refs.main;
  const sha = await writeCommit(repo, {
    tree,
    parents: [parent],
    message: commitMessage(files.catalog),
    author: { ...AUTHOR, timestamp: Math.floor(Date.parse(files.catalog.created_at) / 1000) },
  });
  return { kind: "commit", sha, parent };
}

function commitMessage(catalog: Catalog): string {
  return `engram: memory catalog v${catalog.catalog_version}\n\nCatalog ${catalog.hash}, ${catalog.entries.length} engram(s). Proposed by the engram Director.\n`;
}

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
async function updateRejections(
  ctx: RepoContext,
  repo: GitRepo,
  refs: Refs,
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

async function openPullRequest(
  repo: GitRepo,
  refs: Refs,
  files: MemoryFiles,
  rejected: number,
  ctx: RepoContext,
  options: ProposeOptions,
): Promise<Pick<ProposalResult, "pr" | "would_open" | "review">> {
  // Only main's catalog and MEMORY.md: the engrams a reviewer sees are the branch's own.
  const mainCatalog = await catalogAt(repo, refs.main);
  const mainFocus = await readFileAt(repo, refs.main, FOCUS_PATH);
  const mainIds = new Set(mainCatalog.entries.map((e) => e.engram_id));
  const added = new Map<string, Engram>();
  for (const entry of files.catalog.entries) {
    const text = files.files.get(entry.path);
    if (mainIds.has(entry.engram_id) || text === undefined) continue;
    added.set(entry.engram_id, JSON.parse(text) as Engram);
  }
  const bytes = (text: string | undefined) =>
    text === undefined ? null : Buffer.byteLength(text, "utf8");
  const review = buildProposal({
    base: {
      branch: options.base,
      sha: refs.main,
      catalog: mainCatalog,
      focusBytes: bytes(mainFocus?.text),
    },
    head: {
      branch: options.branch,
      catalog: files.catalog,
      focusBytes: bytes(files.files.get(FOCUS_PATH)),
    },
    added,
    memory: ctx.config.memory,
    rejectedSkipped: rejected,
  });
  const text = {
    title: renderPrTitle(review),
    body: renderPrBody(review, options.fileUrl ? { fileUrl: options.fileUrl } : {}),
  };
  if (!options.pulls) return { pr: null, would_open: text, review };
  const pr = await options.pulls.upsert({ head: options.branch, base: options.base, ...text });
  return { pr, would_open: null, review };
}
