import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { entityMatcher } from "../core/graph/entities.js";
import {
  byPlace,
  type EngramPlace,
  LEARNING_STATUSES,
  type LearningEntry,
  type LearningStatus,
  type PlacedLearning,
  placedKnowledge,
  placedLearnings,
} from "../core/graph/lifecycle.js";
import { type ImportProposalEntry, importProposalEntry } from "../core/history/proposals.js";
import { emptyCatalog } from "../core/model/engram.js";
import { MEMORY_DIR } from "../core/model/paths.js";
import { proposedEngramIds } from "../core/proposal/catalog-merge.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import {
  type KnowledgeItem,
  knowledgeItems,
  knowledgeLearning,
  versionTimes,
} from "../core/versions/knowledge-view.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { firstAdded } from "../git/activity-log.js";
import { type GitRepo, mergeBase, openRepo, resolveCommit } from "../git/history.js";
import type { HeadPull } from "../github/publish.js";
import { readKnowledge } from "../repo/knowledge.js";
import { findBase } from "../repo/main-drift.js";
import { catalogAt, memoryFilesAt } from "../repo/memory-at.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Engram } from "../schema/engram.js";
import type { Registry } from "../schema/registry.js";
import { readSessionEvidence } from "./documents.js";
import { listProposals } from "./import-proposals.js";
import { loadRegistry } from "./registry.js";

/** Every pull request of a head branch (GitHub, or the local test server). */
export type PullHistory = (head: string) => Promise<HeadPull[]>;

/** The engram branch's pull requests when GitHub is configured (else git alone decides). */
export async function pullHistoryOf(
  ctx: RepoContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PullHistory | undefined> {
  // Loaded on demand: without GitHub, no client library is read.
  const { createGitHub, githubSettings } = await import("../github/client.js");
  const settings = githubSettings(env, ctx.config, trustOf(ctx, env).userConfig);
  if (settings === null) return undefined;
  const { pullsOfHead } = await import("../github/publish.js");
  const gh = createGitHub(settings);
  return (head) => pullsOfHead(gh, { owner: settings.owner, repo: settings.repo, head });
}

/** What a Tana run reads beside memory: the registry's people and projects, the states. */
export async function tanaInputs(
  ctx: RepoContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ registry: Registry; learnings: LearningGraph; warnings: string[] }> {
  const registry = loadRegistry(ctx.repoDir);
  const pulls = await pullHistoryOf(ctx, env);
  try {
    return { registry, learnings: await learningGraph(ctx, pulls), warnings: [] };
  } catch (error) {
    if (pulls === undefined) throw error;
    // GitHub unreachable must not stop a sync: git alone decides (nothing is rejected then).
    const learnings = await learningGraph(ctx);
    const why = (error as Error).message;
    return { registry, learnings, warnings: [`learning states from git only: ${why}`] };
  }
}

export interface LearningsReport {
  base: string;
  branch: string;
  /** Whether GitHub was asked for the engram pull requests (else git alone decided). */
  github: { asked: boolean; pulls: number; unreadable: number[] };
  counts: Record<LearningStatus, number>;
  learnings: LearningEntry[];
  /**
   * Decisions a history import was not sure of (`ingest --from-git`, below
   * memory.history_min_confidence), each with the command that confirms it; left out when
   * the list is narrowed to confirmed or rejected learnings.
   */
  import_proposals: ImportProposalEntry[];
}

/** Every learning git and GitHub know of, with its links, and the engrams stating them. */
export interface LearningGraph {
  placed: PlacedLearning[];
  engrams: Map<string, Engram>;
  github: LearningsReport["github"];
}

async function tryResolve(repo: GitRepo, revs: readonly string[]): Promise<string | null> {
  for (const rev of revs) {
    try {
      return await resolveCommit(repo, rev);
    } catch {
      // not here: try the next
    }
  }
  return null;
}

function engramsOf(files: MemoryFiles): Map<string, Engram> {
  const out = new Map<string, Engram>();
  for (const entry of files.catalog.entries) {
    const text = files.files.get(entry.path);
    if (text !== undefined) out.set(entry.engram_id, JSON.parse(text) as Engram);
  }
  return out;
}

function knowledgeOf(files: MemoryFiles): KnowledgeItem[] {
  return knowledgeItems(
    files.catalog,
    files.files,
    versionTimes(files.files.get(VERSION_LOG_PATH)),
  );
}

/**
 * Engrams this checkout took from main that main has since removed (a rollback merged there):
 * still in a work tree that has not merged main again, but no proposal of anyone's.
 */
async function removedByMain(repo: GitRepo, main: string | null): Promise<Set<string>> {
  if (main === null) return new Set();
  const head = await tryResolve(repo, ["HEAD"]);
  const from = head ? await mergeBase(repo, head, main).catch(() => undefined) : undefined;
  if (from === undefined || from === main) return new Set();
  const [then, now] = await Promise.all([catalogAt(repo, from), catalogAt(repo, main)]);
  const kept = new Set(now.entries.map((e) => e.engram_id));
  return new Set(then.entries.map((e) => e.engram_id).filter((id) => !kept.has(id)));
}

const WORK_TREE: EngramPlace = { status: "proposed", where: "work tree" };

/**
 * `worker learnings`: every learning with where it stands. On the base branch it is
 * confirmed (when its engram reached the branch: the merge of its pull request); in a pull
 * request closed unmerged, rejected; on the engram branch or in an open pull request, or
 * only in the work tree, proposed. With GitHub, the pull requests say it (a merge not yet
 * fetched is confirmed, `confirmed_at` is the merge); without, git alone does. Beside them,
 * the history import's open proposals, each with the command that confirms it.
 */
export async function listLearnings(
  ctx: RepoContext,
  options: { pulls?: PullHistory | undefined; status?: LearningStatus | undefined } = {},
): Promise<LearningsReport> {
  const graph = await learningGraph(ctx, options.pulls);
  const all = graph.placed.map((p) => p.entry);
  const counts = Object.fromEntries(LEARNING_STATUSES.map((s) => [s, 0])) as Record<
    LearningStatus,
    number
  >;
  for (const l of all) counts[l.status]++;
  return {
    base: ctx.config.github.base_branch,
    branch: ctx.config.github.head_branch,
    github: graph.github,
    counts,
    learnings: options.status ? all.filter((l) => l.status === options.status) : all,
    // The same list `director confirm` reads, so each one listed is one it confirms.
    import_proposals:
      options.status === undefined || options.status === "proposed"
        ? (await listProposals(ctx)).map(importProposalEntry)
        : [],
  };
}

/** The placing behind `listLearnings`, kept whole for the sync targets (Tana's node kinds). */
export async function learningGraph(
  ctx: RepoContext,
  pullHistory?: PullHistory,
): Promise<LearningGraph> {
  const repo = await openRepo(ctx.repoDir);
  const base = ctx.config.github.base_branch;
  const branch = ctx.config.github.head_branch;
  const engrams = new Map<string, Engram>();
  const places = new Map<string, EngramPlace>();
  // Sources are read best first: the first place an engram is found in is where it stands.
  const place = (found: ReadonlyMap<string, Engram>, at: (id: string) => EngramPlace) => {
    for (const [id, engram] of found) {
      if (places.has(id)) continue;
      engrams.set(id, engram);
      places.set(id, at(id));
    }
  };

  const knowledge: { items: KnowledgeItem[]; place: EngramPlace }[] = [];
  // The same main `worker check` judges against: the newer of the local and the fetched one.
  const main = (await findBase(ctx.repoDir, base))?.sha ?? null;
  const pulls = pullHistory ? await pullHistory(branch) : [];
  const unreadable: number[] = [];
  // What each pull request proposed: its head's engrams that its merge base did not hold.
  const proposals = new Map<number, Map<string, Engram>>();
  const proposedBy = async (pull: HeadPull) => {
    const known = proposals.get(pull.number);
    if (known) return known;
    let found = new Map<string, Engram>();
    try {
      const files = await memoryFilesAt(repo, pull.headSha);
      const from = main ? await mergeBase(repo, pull.headSha, main) : undefined;
      const fromCatalog = from ? await catalogAt(repo, from) : emptyCatalog();
      const ids = new Set(proposedEngramIds(fromCatalog, files.catalog));
      found = new Map([...engramsOf(files)].filter(([id]) => ids.has(id)));
    } catch {
      unreadable.push(pull.number); // its commits are not fetched here
    }
    proposals.set(pull.number, found);
    return found;
  };
  const merged = new Map<string, { at: number; pr: number }>();
  const mergedPulls = pulls.filter((p) => p.mergedAt !== null);
  for (const pull of mergedPulls) {
    const at = Math.floor(Date.parse(pull.mergedAt as string) / 1000);
    for (const id of (await proposedBy(pull)).keys()) {
      if (!merged.has(id)) merged.set(id, { at, pr: pull.number });
    }
  }

  if (main) {
    const added = await firstAdded(ctx.repoDir, MEMORY_DIR, main);
    const files = await memoryFilesAt(repo, main);
    const pathOf = new Map(files.catalog.entries.map((e) => [e.engram_id, e.path]));
    knowledge.push({ items: knowledgeOf(files), place: { status: "confirmed", where: "main" } });
    place(engramsOf(files), (id) => {
      const pr = merged.get(id);
      const at = pr?.at ?? added.get(pathOf.get(id) ?? "");
      return {
        status: "confirmed",
        where: "main",
        ...(at !== undefined ? { confirmedAt: at } : {}),
        ...(pr ? { pr: pr.pr } : {}),
      };
    });
  }
  for (const pull of mergedPulls) {
    place(await proposedBy(pull), (id) => ({
      status: "confirmed",
      where: "merged pull request",
      confirmedAt: merged.get(id)?.at as number,
      pr: pull.number,
    }));
  }
  // Before the branch: a closed pull request's engrams may still sit on the branch it left.
  for (const pull of pulls.filter((p) => p.state === "closed" && p.mergedAt === null)) {
    const closed = pull.closedAt === null ? Number.NaN : Date.parse(pull.closedAt);
    place(await proposedBy(pull), () => ({
      status: "rejected",
      where: "closed pull request",
      ...(Number.isNaN(closed) ? {} : { decidedAt: Math.floor(closed / 1000) }),
      pr: pull.number,
    }));
  }
  const open = pulls.find((p) => p.state === "open");
  const head = await tryResolve(repo, [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]);
  // Only what the branch adds to where it left main is proposed: a branch already merged
  // proposes nothing, and what main removed since (a rollback) is not proposed again.
  const from = head && main ? await mergeBase(repo, head, main) : undefined;
  if (head && from !== head) {
    const where = open ? "open pull request" : "branch";
    const files = await memoryFilesAt(repo, head);
    const added = new Set(
      proposedEngramIds(from ? await catalogAt(repo, from) : emptyCatalog(), files.catalog),
    );
    const proposed = { status: "proposed", where, ...(open ? { pr: open.number } : {}) } as const;
    place(new Map([...engramsOf(files)].filter(([id]) => added.has(id))), () => proposed);
    knowledge.push({ items: knowledgeOf(files), place: proposed });
  }
  const tree = await readCatalog(ctx.repoDir);
  const removed = await removedByMain(repo, main);
  const unplaced = tree.entries.filter(
    (e) => !places.has(e.engram_id) && !removed.has(e.engram_id),
  );
  place(await loadEngrams(ctx.repoDir, unplaced), () => ({
    status: "proposed",
    where: "work tree",
  }));
  // Sessions' knowledge, placed like engrams: on the base branch, on the engram branch or in
  // its open pull request, in the work tree, in a pull request closed unmerged.
  knowledge.push({ items: await readKnowledge(ctx.repoDir, tree), place: WORK_TREE });
  for (const pull of pulls.filter((p) => p.state === "closed" && p.mergedAt === null)) {
    const files = await memoryFilesAt(repo, pull.headSha).catch(() => undefined);
    if (files === undefined) continue;
    knowledge.push({
      items: knowledgeOf(files),
      place: { status: "rejected", where: "closed pull request", pr: pull.number },
    });
  }

  const matcher = entityMatcher(loadRegistry(ctx.repoDir));
  const placed = placedLearnings(
    engrams,
    places,
    matcher,
    await readSessionEvidence(ctx.repoDir, tree),
  );
  const fromKnowledge = placedKnowledge(
    knowledge,
    new Set(placed.map((p) => p.entry.id)),
    (k: KnowledgeItem) => knowledgeLearning(k, matcher),
  );
  return {
    placed: [...placed, ...fromKnowledge].sort(byPlace),
    engrams,
    github: { asked: pullHistory !== undefined, pulls: pulls.length, unreadable },
  };
}
