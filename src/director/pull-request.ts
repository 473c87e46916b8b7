import type { RepoContext } from "../context/repo-context.js";
import { isHistoryImport } from "../core/history/kinds.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import type { ProposalRefs } from "../core/proposal/plan.js";
import { buildProposal } from "../core/proposal/proposal.js";
import type { MemoryFiles } from "../core/proposal/replay.js";
import type { WithheldItem } from "../core/proposal/withhold.js";
import { proposedRecords, recordItem } from "../core/proposal/withhold-records.js";
import { type HeldForReview, renderPrBody, renderPrTitle } from "../core/rendering/pr-body.js";
import type { SessionFile } from "../core/versions/documents.js";
import { gitText } from "../git/git-child.js";
import { type GitRepo, readFileAt } from "../git/history.js";
import { catalogAt, knowledgeRecordIdsAt } from "../repo/memory-at.js";
import type { Catalog, Engram } from "../schema/engram.js";
import type { ProposalResult, ProposeOptions } from "./propose-types.js";

/** The pull request of a proposal: its review, its text, and the upsert when GitHub is set up. */
export async function openPullRequest(
  repo: GitRepo,
  refs: ProposalRefs,
  files: MemoryFiles,
  rejected: number,
  ctx: RepoContext,
  options: ProposeOptions,
  withheld: readonly WithheldItem[] = [],
): Promise<Pick<ProposalResult, "pr" | "would_open" | "review">> {
  // Only main's catalog and MEMORY.md: the engrams a reviewer sees are the branch's own.
  const mainCatalog = await catalogAt(repo, refs.main);
  const mainFocus = await readFileAt(repo, refs.main, FOCUS_PATH);
  const mainIds = new Set(mainCatalog.entries.map((e) => e.engram_id));
  const added = new Map<string, Engram>();
  // Main's engrams the branch keeps: the memory a new decision may contradict.
  const kept: Engram[] = [];
  for (const entry of files.catalog.entries) {
    const text = files.files.get(entry.path);
    if (text === undefined) continue;
    if (mainIds.has(entry.engram_id)) kept.push(JSON.parse(text) as Engram);
    else added.set(entry.engram_id, JSON.parse(text) as Engram);
  }
  const bytes = (text: string | undefined) =>
    text === undefined ? null : Buffer.byteLength(text, "utf8");
  const review = buildProposal({
    base: {
      branch: options.base,
      sha: refs.main,
      catalog: mainCatalog,
      focusBytes: bytes(mainFocus?.text),
      focusText: mainFocus?.text ?? null,
    },
    head: {
      branch: options.branch,
      catalog: files.catalog,
      focusBytes: bytes(files.files.get(FOCUS_PATH)),
      focusText: files.files.get(FOCUS_PATH) ?? null,
    },
    added,
    kept,
    memory: ctx.config.memory,
    rejectedSkipped: rejected,
    withheld,
    commitTimes: await commitTimes(ctx.repoDir, [...added.values()]),
    records: proposedRecords(
      files.catalog,
      files.files,
      await knowledgeRecordIdsAt(repo, refs.main, mainCatalog),
    ).map(recordItem),
  });
  const held = heldForReview(mainCatalog, files);
  const text = {
    title: renderPrTitle(review),
    body: renderPrBody(review, {
      ...(options.fileUrl ? { fileUrl: options.fileUrl } : {}),
      ...(held.length > 0 ? { held } : {}),
      ...(options.dashboardUrl ? { dashboardUrl: options.dashboardUrl } : {}),
    }),
  };
  if (!options.pulls) return { pr: null, would_open: text, review };
  const pr = await options.pulls.upsert({ head: options.branch, base: options.base, ...text });
  return { pr, would_open: null, review };
}

/** Core changes held for review by the sessions this proposal consolidates (not on main). */
function heldForReview(main: Catalog, files: MemoryFiles): HeldForReview[] {
  const onMain = new Set((main.documents ?? []).map((d) => d.path));
  const held: HeldForReview[] = [];
  for (const doc of files.catalog.documents ?? []) {
    if (doc.kind !== "session" || onMain.has(doc.path)) continue;
    const text = files.files.get(doc.path);
    if (text === undefined) continue;
    const session = JSON.parse(text) as SessionFile;
    for (const c of session.conflicts ?? []) {
      if (c.resolution !== "held_for_review") continue;
      held.push({
        session_id: session.session_id,
        key: c.key,
        parent_version: c.parent_version,
        changed_in_version: c.changed_in_version,
        proposed: c.proposed,
      });
    }
  }
  return held;
}

/** Most commits whose times one proposal reads (an import keeps a few hundred decisions). */
const MOST_COMMITS = 2000;

/**
 * When the commits a history import's engrams were read from were made, in one `git show`:
 * the body dates each imported decision by its commit, not by the import. A commit this
 * clone does not have leaves every decision undated, as before.
 */
async function commitTimes(
  repoDir: string,
  engrams: readonly Engram[],
): Promise<Map<string, string>> {
  const shas = new Set<string>();
  for (const engram of engrams.filter(isHistoryImport)) {
    const links = [engram.links, ...Object.values(engram.said_by ?? {}).map((s) => s.links ?? [])];
    for (const link of links.flat()) {
      if (link.type === "commit" && /^[0-9a-f]{7,64}$/.test(link.ref)) shas.add(link.ref);
    }
  }
  const times = new Map<string, string>();
  if (shas.size === 0 || shas.size > MOST_COMMITS) return times;
  const asked = [...shas].sort();
  const out = await gitText(repoDir, [
    "show",
    "-s",
    "--no-walk=unsorted",
    "--format=%H %ct",
    ...asked,
  ]);
  for (const line of (out ?? "").split("\n")) {
    const [sha, seconds] = line.split(" ");
    if (sha === undefined || !/^\d+$/.test(seconds ?? "")) continue;
    const at = new Date(Number(seconds) * 1000).toISOString();
    for (const ref of asked) if (sha.startsWith(ref)) times.set(ref, at);
  }
  return times;
}
