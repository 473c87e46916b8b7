import type { Catalog } from "../../schema/engram.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../model/paths.js";
import { type MemoryFiles, memoryChanges } from "./replay.js";

/** Where main and the engram branch are, as the run found them. */
export interface ProposalRefs {
  main: string;
  /** The engram branch, null when there is none yet. */
  branch: string | null;
}

/** How the proposal's commit would reach the branch. */
export type ProposalRoute = "git" | "api" | "local";

/** What `director run --pr` would do, as a value: nothing is committed, pushed or opened. */
export interface ProposalPlan {
  base: string;
  branch: string;
  remote: string | null;
  main_sha: string;
  head_sha: string | null;
  /** `commit`: a new commit on the branch; the others leave the branch where it is. */
  action: "commit" | "unchanged" | "nothing-to-propose";
  /** `update` grows the branch; `regenerate` rebuilds it on main (main moved, or no branch yet). */
  commit: { kind: "create" | "update" | "regenerate"; message: string } | null;
  via: ProposalRoute | null;
  /** The memory files the proposal changes against main, sorted by path. */
  changes: { path: string; change: "add" | "modify" | "delete" }[];
  /** Engrams of the previous proposal carried onto a newer main. */
  carried: number;
  /** Engrams not proposed again because a pull request proposing them was closed unmerged. */
  rejected: number;
  pull_request: "upsert" | "would-open" | "none";
}

export interface ProposalPlanInput {
  base: string;
  branch: string;
  remote: string | null;
  refs: ProposalRefs;
  /** Main's memory, the branch's (null without a branch) and the proposal's after the cycle. */
  main: MemoryFiles;
  onBranch: MemoryFiles | null;
  proposed: MemoryFiles;
  /** The staging tree holds a result not pushed yet. */
  pending: boolean;
  /** The cycle changed the catalog or rendered MEMORY.md. */
  cycleChanged: boolean;
  /** The branch already holds main and the proposal grew from the branch's catalog. */
  grows: boolean;
  carried: number;
  rejected: number;
  github: { pulls: boolean; api: boolean; preferApi: boolean };
}

/** Whether the run has nothing to do: nothing staged, nothing new, no pull request to see to. */
export function proposalIdle(
  input: Pick<ProposalPlanInput, "pending" | "cycleChanged" | "refs" | "github">,
): boolean {
  return (
    !input.pending && !input.cycleChanged && (input.refs.branch === null || !input.github.pulls)
  );
}

/** The route of a push: the API when preferred (or with no remote but an API), else git. */
export function proposalRoute(
  remote: string | null,
  github: ProposalPlanInput["github"],
): ProposalRoute {
  if (remote !== null && !(github.preferApi && github.api)) return "git";
  return github.api ? "api" : "local";
}

/** The commit message of a proposal: the catalog it proposes. */
export function proposalMessage(catalog: Catalog): string {
  return `engram: memory catalog v${catalog.catalog_version}\n\nCatalog ${catalog.hash}, ${catalog.entries.length} engram(s). Proposed by the engram Director.\n`;
}

/**
 * The proposal as a plan: the same decisions `runProposal` makes (idle, same as main, same
 * as the branch, update or regenerate, the route, the pull request), from data alone.
 */
export function planProposal(input: ProposalPlanInput): ProposalPlan {
  const { refs } = input;
  const mainFiles = memoryOnly(input.main.files);
  const proposed = memoryOnly(input.proposed.files);
  // MEMORY.md missing from the proposal keeps main's (the commit grafts only what exists).
  const focus = input.main.files.get(FOCUS_PATH);
  if (!proposed.has(FOCUS_PATH) && focus !== undefined) proposed.set(FOCUS_PATH, focus);
  const changes = memoryChanges(mainFiles, proposed).map(({ path, content }) => ({
    path,
    change:
      content === null
        ? ("delete" as const)
        : mainFiles.has(path)
          ? ("modify" as const)
          : ("add" as const),
  }));
  const sameAsBranch =
    input.onBranch !== null &&
    memoryChanges(memoryOnly(input.onBranch.files), proposed).length === 0;
  const plan: ProposalPlan = {
    base: input.base,
    branch: input.branch,
    remote: input.remote,
    main_sha: refs.main,
    head_sha: refs.branch,
    action: "commit",
    commit: null,
    via: null,
    changes,
    carried: input.carried,
    rejected: input.rejected,
    pull_request: "none",
  };
  if (proposalIdle(input)) {
    return { ...plan, action: refs.branch === null ? "nothing-to-propose" : "unchanged" };
  }
  if (changes.length === 0) return { ...plan, action: "nothing-to-propose" };
  const pullRequest = input.github.pulls ? "upsert" : "would-open";
  if (sameAsBranch) return { ...plan, action: "unchanged", pull_request: pullRequest };
  const kind = refs.branch === null ? "create" : input.grows ? "update" : "regenerate";
  return {
    ...plan,
    commit: { kind, message: proposalMessage(input.proposed.catalog) },
    via: proposalRoute(input.remote, input.github),
    pull_request: pullRequest,
  };
}

/** The files a proposal commit grafts: `memory/` and MEMORY.md. */
function memoryOnly(files: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, text] of files) {
    if (path === FOCUS_PATH || path === CATALOG_PATH || path.startsWith(`${MEMORY_DIR}/`)) {
      out.set(path, text);
    }
  }
  return out;
}
