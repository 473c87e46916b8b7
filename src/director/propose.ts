import type { RepoContext } from "../context/repo-context.js";
import {
  type ProposalPlan,
  type ProposalRefs,
  planProposal,
  proposalIdle,
} from "../core/proposal/plan.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import { type WithheldItem, withholdItems } from "../core/proposal/withhold.js";
import { StateError } from "../errors.js";
import { branchNameOf, type GitRepo, openRepo } from "../git/history.js";
import { remoteExists } from "../git/remote.js";
import { loadRegistry } from "../graph/registry.js";
import { catalogAt, knowledgeRecordIdsAt, memoryFilesAt } from "../repo/memory-at.js";
import { assertOwnedName } from "./branch-owner.js";
import { withDirectorState } from "./director-state.js";
import { readItemDecisions } from "./item-review.js";
import { branchGrows, buildCommit, publish, readRefs } from "./propose-commit.js";
import type { ProposalResult, ProposalStatus, ProposeOptions } from "./propose-types.js";
import { openPullRequest } from "./pull-request.js";
import { updateRejections } from "./rejections.js";
import { type CyclePlanFiles, type RunResult, runCycleOn } from "./run.js";
import {
  prepareStaging,
  readStagingFiles,
  type StagingMeta,
  stagingDir,
  writeStagingMeta,
} from "./staging.js";
import { carryWorkTreeMemory } from "./work-tree-memory.js";

const MAX_ATTEMPTS = 5;

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
  assertOwnedName(options.branch, options.base);
  const repo = await openRepo(ctx.repoDir);
  if ((await branchNameOf(repo, "HEAD")) === options.branch) {
    throw new StateError(
      `${options.branch} is checked out in ${repo.dir}: the Director owns that branch; check out another one`,
    );
  }
  const remote = (await remoteExists(repo.dir, options.remote)) ? options.remote : null;
  // The staging tree holds memory files only: the registry is the repository's.
  const registry = loadRegistry(ctx.repoDir);
  return withDirectorState(
    ctx,
    async (buffer) => {
      let previous: string | null = null;
      for (let attempt = 1; ; attempt++) {
        const refs = await readRefs(repo, remote, options);
        if (attempt === 1) {
          previous = refs.branch;
          if (options.dryRun !== true) await tagMerged(repo, remote, refs.main);
        }
        const rejected = await updateRejections(ctx, repo, refs, options);
        const staging = await prepareStaging(ctx, repo, refs, rejected, options.dryRun === true);
        // Memory a cycle left in the work tree is proposed too, never left behind.
        const fromTree = await carryWorkTreeMemory(
          ctx,
          repo,
          refs.main,
          staging.meta,
          rejected,
          options.dryRun === true,
        );
        if (fromTree !== undefined) {
          staging.meta = fromTree.meta;
          if (fromTree.memory.carried > 0 && options.dryRun !== true) staging.pending = true;
        }
        const dir = stagingDir(ctx.paths, staging.meta);
        let stepped = false;
        if (attempt === 1 && options.beforeCycle !== undefined && options.dryRun !== true) {
          await options.beforeCycle({ ...ctx, repoDir: dir }, buffer);
          stepped = true;
        }
        let planned: CyclePlanFiles | undefined;
        const run = await runCycleOn({ ...ctx, repoDir: dir }, buffer, {
          ...options,
          registry,
          gitDir: ctx.repoDir,
          ...(options.dryRun ? { onDryRun: (p: CyclePlanFiles) => (planned = p) } : {}),
        });
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
          plan: null,
          work_tree: fromTree?.memory ?? null,
        };
        const github = {
          pulls: options.pulls != null,
          api: options.apiCommit !== undefined,
          preferApi: options.preferApi === true,
        };
        const cycleChanged = run.changed || run.focus !== null || stepped;
        if (options.dryRun) {
          const plan = await dryRunPlan(ctx, repo, refs, remote, options, {
            dir,
            staging,
            planned,
            cycleChanged,
            rejected,
            github,
          });
          return {
            run,
            proposal: {
              ...base,
              status: "dry-run",
              head_sha: refs.branch,
              pushed: false,
              via: null,
              plan,
            },
          };
        }
        if (proposalIdle({ pending: staging.pending, cycleChanged, refs, github })) {
          // Nothing new since the last push, the refs are where they were, no PR to see to.
          const status = refs.branch === null ? "nothing-to-propose" : "unchanged";
          writeStagingMeta(ctx.paths, { ...staging.meta, dirty: false });
          return {
            run,
            proposal: { ...base, status, head_sha: refs.branch, pushed: false, via: null },
          };
        }
        // The branch gets the staged proposal without held and rejected items.
        const view = await pushedView(ctx, repo, refs, await readStagingFiles(dir), rejected);
        const { files, withheld } = view;
        const held = withheld.length > 0;
        const built = await buildCommit(repo, refs, files, staging.meta.start_catalog);
        if (built.kind !== "commit") {
          writeStagingMeta(ctx.paths, { ...staging.meta, dirty: false, withheld: held });
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
              await openPullRequest(repo, refs, files, rejected.size, ctx, options, withheld),
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
          withheld: held,
        });
        const status: ProposalStatus =
          refs.branch === null
            ? "created"
            : built.parent === refs.branch
              ? "updated"
              : "regenerated";
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
            withheld,
          ),
        );
        return { run, proposal };
      }
    },
    // What the drains compact for room goes to the staging tree with this cycle, or waits
    // in the state folder: never to the work tree, whatever `memory.publish` says.
    { settle: false, pullRequest: true },
  );
}

/**
 * What the branch gets of the staged files: the items reviewers must release (secret-like)
 * or rejected one by one are left out; the staging tree keeps them for a later release.
 */
async function pushedView(
  ctx: RepoContext,
  repo: GitRepo,
  refs: ProposalRefs,
  staged: MemoryFiles,
  rejectedEngrams: ReadonlySet<string>,
): Promise<{ files: MemoryFiles; withheld: WithheldItem[] }> {
  const main = await catalogAt(repo, refs.main);
  return withholdItems({
    files: staged,
    mainIds: new Set(main.entries.map((e) => e.engram_id)),
    mainRecords: await knowledgeRecordIdsAt(repo, refs.main, main),
    decisions: readItemDecisions(ctx),
    rejectedEngrams,
    memory: ctx.config.memory,
  });
}

/**
 * Snapshot tags for the versions main holds (made here, or rebuilt after a merge made
 * elsewhere), and with a remote, those tags pushed: they describe merged memory only.
 */
async function tagMerged(repo: GitRepo, remote: string | null, main: string): Promise<void> {
  const { tagMergedVersions, pushMergedTags } = await import("./version-tags.js");
  const { merged } = await tagMergedVersions(repo, main);
  if (remote !== null) await pushMergedTags(repo.dir, remote, merged);
}

/**
 * `--dry-run`: the plan of this run, from the staging tree with the cycle's planned writes
 * laid over it. Reads git objects; commits, pushes and opens nothing.
 */
async function dryRunPlan(
  ctx: RepoContext,
  repo: GitRepo,
  refs: ProposalRefs,
  remote: string | null,
  options: ProposeOptions,
  seen: {
    dir: string;
    staging: { meta: StagingMeta; carried: number; pending: boolean };
    planned: CyclePlanFiles | undefined;
    cycleChanged: boolean;
    rejected: ReadonlySet<string>;
    github: { pulls: boolean; api: boolean; preferApi: boolean };
  },
): Promise<ProposalPlan> {
  const staged = await readStagingFiles(seen.dir);
  const files = new Map(staged.files);
  for (const path of seen.planned?.deletes ?? []) files.delete(path);
  for (const { path, text } of seen.planned?.writes ?? []) files.set(path, text);
  // As the branch would get it: without held and rejected items.
  const { files: proposed } = await pushedView(
    ctx,
    repo,
    refs,
    { catalog: seen.planned?.catalog ?? staged.catalog, files },
    seen.rejected,
  );
  return planProposal({
    base: options.base,
    branch: options.branch,
    remote,
    refs,
    main: await memoryFilesAt(repo, refs.main),
    onBranch: refs.branch === null ? null : await memoryFilesAt(repo, refs.branch),
    proposed,
    pending: seen.staging.pending,
    cycleChanged: seen.cycleChanged,
    grows: await branchGrows(repo, refs, seen.staging.meta.start_catalog),
    carried: seen.staging.carried,
    rejected: seen.rejected.size,
    github: seen.github,
  });
}
