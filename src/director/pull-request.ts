import type { RepoContext } from "../context/repo-context.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import type { ProposalRefs } from "../core/proposal/plan.js";
import { buildProposal } from "../core/proposal/proposal.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import { renderPrBody, renderPrTitle } from "../core/rendering/pr-body.js";
import { type GitRepo, readFileAt } from "../git/history.js";
import { catalogAt } from "../repo/memory-at.js";
import type { Engram } from "../schema/engram.js";
import type { ProposalResult, ProposeOptions } from "./propose-types.js";

/** The pull request of a proposal: its review, its text, and the upsert when GitHub is set up. */
export async function openPullRequest(
  repo: GitRepo,
  refs: ProposalRefs,
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
