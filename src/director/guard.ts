import { appendFileSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { loadConfig } from "../config/load.js";
import { parseConfigText } from "../config/parse.js";
import { contradictionFlags } from "../core/checks/contradictions.js";
import { compareFindings } from "../core/checks/findings.js";
import {
  type CatalogStamp,
  type FlaggedAt,
  flagWarnings,
  type GuardFinding,
  githubAnnotation,
  guardFindings,
  guardSummaryMarkdown,
  isDirectorBranch,
  trackedStateFindings,
} from "../core/checks/guard.js";
import { lowConfidenceFlags, reviewFlags } from "../core/checks/review-flags.js";
import { verifyMemory } from "../core/checks/verify.js";
import { verifyFocusFile } from "../core/checks/verify-focus-file.js";
import { linkFindings } from "../core/checks/verify-links.js";
import { verifyVersionLog } from "../core/checks/version-log.js";
import {
  CATALOG_PATH,
  FOCUS_PATH,
  MEMORY_DIR,
  stateDirProblem,
  tierDir,
} from "../core/model/paths.js";
import { knowledgeItems } from "../core/proposal/knowledge.js";
import { foldersOutside, securityChanges } from "../core/trust/security-keys.js";
import { CORE_DIR, KNOWLEDGE_DIR, STATE_DIR } from "../core/versions/documents.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import {
  branchNameOf,
  changedPaths,
  type GitRepo,
  inTree,
  mergeBase,
  openRepo,
  readFileAt,
  readFilesUnder,
  readTreeAt,
  resolveCommit,
  subtreeAt,
  withinRepo,
} from "../git/history.js";
import { type Config, defaultConfig } from "../schema/config.js";
import { type Engram, Engram as EngramSchema } from "../schema/engram.js";
import { DEFAULT_STATE_DIR } from "../state/paths.js";
import { branchTip, foreignCommits } from "./branch-owner.js";
import { type AddedRecords, addedRecords } from "./guard-records.js";

export interface GuardOptions {
  /** The engram repository folder (default: the current one). */
  repo?: string | undefined;
  base: string;
  head: string;
  /** The PR's head branch, when `head` is not itself a branch (a CI merge ref, a sha). */
  headBranch?: string | undefined;
  /** A config file in the work tree to use instead of the head's `config/dev.toml`. */
  config?: string | undefined;
  /**
   * OWNER/NAME of the repository the PR comes from, and of the one it targets: a head from
   * another repository (a fork) is never the Director's, whatever its branch is called.
   * Inside GitHub Actions both default to the event's `pull_request.head.repo` and
   * `pull_request.base.repo`.
   */
  headRepo?: string | undefined;
  baseRepo?: string | undefined;
  /** Environment for the Actions fallbacks (`GITHUB_HEAD_REF`, the event); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface GuardResult {
  ok: boolean;
  findings: GuardFinding[];
  /** What does not fail the guard but a reviewer must open: sealed or sensitive engrams. */
  warnings: GuardFinding[];
  base: string;
  head: string;
  merge_base: string | null;
  head_branch: string | null;
  /** Where the branch name came from. */
  head_branch_from: "option" | "ref" | "GITHUB_HEAD_REF" | null;
  /** The repository the head comes from, when known, and whether it is another one (a fork). */
  head_repo: string | null;
  fork: boolean;
  director_branch: boolean;
  changed_paths: number;
}

const CONFIG_PATH = "config/dev.toml";

/**
 * `director guard`: the PR checks on local refs. Reads objects at `base`, `head` and their
 * merge base with isomorphic-git; the work tree and the index are never read or written.
 */
export async function guardRefs(options: GuardOptions): Promise<GuardResult> {
  const repo = await openRepo(options.repo ?? process.cwd());
  const base = await resolveCommit(repo, options.base);
  const head = await resolveCommit(repo, options.head);
  const fork = await mergeBase(repo, base, head);

  const named = await headBranchOf(repo, options);
  const origin = pullRequestRepos(options);
  const isFork =
    origin.base !== undefined &&
    (origin.head === undefined || origin.head.toLowerCase() !== origin.base.toLowerCase());
  // A fork may name its branch engram/...: only this repository's branches are the Director's.
  const headBranch =
    isFork && named.name !== undefined
      ? `fork:${origin.head ?? "unknown"}:${named.name}`
      : named.name;
  // The PR's own changes, as GitHub shows them: main moving on is not the branch's doing.
  const changed = withinRepo(repo, await changedPaths(repo, fork ?? base, head));
  const director = isDirectorBranch(headBranch);
  const config = await configAt(repo, head, options);
  const configPath = repoConfigPath(options);
  const before = await configOrDefault(repo, fork ?? base, configPath);
  const after = await configOrDefault(repo, head, configPath);

  const catalogText = (await readFileAt(repo, head, CATALOG_PATH))?.text;
  const logText = (await readFileAt(repo, head, VERSION_LOG_PATH))?.text;
  const files = [
    ...(await readFilesUnder(repo, head, tierDir("st"))),
    ...(await readFilesUnder(repo, head, tierDir("lt"))),
  ];
  const memoryMd = (await readFileAt(repo, head, FOCUS_PATH))?.text;
  const flagged = flagsOnAdded(
    files,
    await catalogIdsAt(repo, base),
    // The base's floor: a branch cannot lower the bar it is judged by.
    before.memory.promote_min_confidence,
    await addedRecords(repo, base, head),
    catalogOrderOf(catalogText),
  );
  const findings = guardFindings({
    flagged,
    headBranch,
    changedPaths: changed,
    configPath,
    securityChanges: securityChanges(before, after),
    outsideFolders: foldersOutside(after),
    foreignCommits: director
      ? await foreignCommits(repo, base, await branchTip(repo, base, head))
      : [],
    baseCatalog: await catalogStamp(repo, base),
    mergeBaseCatalog: fork === undefined ? undefined : await catalogStamp(repo, fork),
    verifyFindings: [
      ...verifyMemory({ catalogText, files, memoryMd, memory: config.memory }),
      ...verifyVersionLog(logText, catalogText),
      ...(await headFocusFindings(repo, head, { catalogText, memoryMd, files, config })),
      ...linkFindings(await memoryLinksAt(repo, head), "on this branch (git mode 120000)"),
    ],
  });
  findings.push(...trackedStateFindings(await stateFilesAt(repo, head, config.state.dir)));
  findings.sort(compareFindings);
  return {
    ok: findings.length === 0,
    findings,
    warnings: flagWarnings(flagged),
    base,
    head,
    merge_base: fork ?? null,
    head_branch: headBranch ?? null,
    head_branch_from: named.from,
    head_repo: origin.head ?? null,
    fork: isFork,
    director_branch: director,
    changed_paths: changed.length,
  };
}

/**
 * The review flags on the engrams and the sessions' knowledge records the head adds to the
 * base (`src/core/checks/review-flags.ts`), and their decisions that contradict the base's
 * engrams the head keeps (contradictions.ts), as the pull-request body flags them: files that
 * do not parse are verify's to report, so they are skipped here.
 */
function flagsOnAdded(
  files: readonly { path: string; text: string }[],
  baseIds: ReadonlySet<string>,
  confidenceFloor: number,
  records: AddedRecords,
  catalogOrder: readonly string[],
): FlaggedAt[] {
  const added: Engram[] = [];
  const kept: Engram[] = [];
  const pathOf = new Map<string, string>();
  for (const file of files) {
    let raw: unknown;
    try {
      raw = JSON.parse(file.text);
    } catch {
      continue;
    }
    const parsed = EngramSchema.safeParse(raw);
    if (!parsed.success) continue;
    const engram = parsed.data as Engram;
    if (baseIds.has(engram.engram_id)) {
      kept.push(engram);
      continue;
    }
    added.push(engram);
    pathOf.set(engram.engram_id, file.path);
  }
  // In the catalog's order, as the body reads them: an item several engrams state (a
  // long-term engram carries its short-term ones' decisions) is flagged once, under the first.
  const rank = new Map(catalogOrder.map((id, i) => [id, i]));
  const at = (e: Engram) => rank.get(e.engram_id) ?? catalogOrder.length;
  added.sort((a, b) => at(a) - at(b));
  const fromEngrams = knowledgeItems(added);
  // A record stating what an engram states is one item, flagged under the engram (as listed).
  const listed = new Set(fromEngrams.map((item) => item.id));
  const items = [...fromEngrams, ...records.items.filter((r) => !listed.has(r.id))];
  // Where a reviewer's release is recorded: the engram, or a record's knowledge file.
  const released = new Map(records.released);
  for (const e of added) released.set(e.engram_id, new Set(e.released ?? []));
  return [
    ...reviewFlags(items, added),
    ...contradictionFlags(items, kept, added),
    ...lowConfidenceFlags(items, confidenceFloor),
  ].map((flag) => ({
    ...flag,
    // A record's `engram_id` is its knowledge file: the path the flag points at.
    path: pathOf.get(flag.engram_id) ?? flag.engram_id,
    ...(flag.kind === "secret" && released.get(flag.engram_id)?.has(flag.item_id ?? "")
      ? { released: true as const }
      : {}),
  }));
}

/** The engram ids of a catalog text in its order; none when it does not parse (verify says so). */
function catalogOrderOf(text: string | undefined): string[] {
  try {
    const raw = JSON.parse(text ?? "{}") as { entries?: { engram_id?: unknown }[] };
    return (raw.entries ?? []).map((e) => String(e.engram_id));
  } catch {
    return [];
  }
}

async function catalogIdsAt(repo: GitRepo, commit: string): Promise<Set<string>> {
  const text = (await readFileAt(repo, commit, CATALOG_PATH))?.text;
  try {
    const raw = JSON.parse(text ?? "{}") as { entries?: { engram_id?: unknown }[] };
    return new Set((raw.entries ?? []).map((e) => String(e.engram_id)));
  } catch {
    return new Set();
  }
}

/** MEMORY.md at the head must be what the Director generates from the head's memory. */
async function headFocusFindings(
  repo: GitRepo,
  head: string,
  at: {
    catalogText: string | undefined;
    memoryMd: string | undefined;
    files: readonly { path: string; text: string }[];
    config: Config;
  },
) {
  const texts = new Map(at.files.map((f) => [f.path, f.text]));
  const documents = new Map<string, string>();
  for (const dir of [STATE_DIR, CORE_DIR, KNOWLEDGE_DIR]) {
    for (const f of await readFilesUnder(repo, head, dir)) documents.set(f.path, f.text);
  }
  return verifyFocusFile({
    catalogText: at.catalogText,
    memoryMd: at.memoryMd,
    text: (path) => texts.get(path),
    documents,
    memory: at.config.memory,
  });
}

/**
 * The symbolic links (git mode 120000) at `commit` under memory/ (the folder itself included)
 * and at MEMORY.md, repo-relative: a branch that adds one could point a Director's writes or
 * a reader anywhere once checked out (`memory/lt -> ../.git/hooks`).
 */
export async function memoryLinksAt(repo: GitRepo, commit: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (oid: string, at: string): Promise<void> => {
    for (const entry of (await readTreeAt(repo, oid)).entries) {
      const path = `${at}/${entry.path}`;
      if (entry.mode === "120000") out.push(path);
      else if (entry.type === "tree") await visit(entry.oid, path);
    }
  };
  const rootPath = inTree(repo, "").replace(/\/$/, "");
  const root =
    rootPath === "" ? await readTreeAt(repo, commit) : await subtreeAt(repo, commit, rootPath);
  for (const entry of root?.entries ?? []) {
    if (entry.path !== MEMORY_DIR && entry.path !== FOCUS_PATH) continue;
    if (entry.mode === "120000") out.push(entry.path);
    else if (entry.type === "tree") await visit(entry.oid, entry.path);
  }
  return out.sort();
}

/**
 * The files `commit` holds in the state folder: under `.engram` and under `stateDir` (the
 * head's own `[state] dir`, when it is a plain relative folder), links included.
 */
export async function stateFilesAt(
  repo: GitRepo,
  commit: string,
  stateDir: string,
): Promise<string[]> {
  const dirs = new Set([DEFAULT_STATE_DIR]);
  const own = stateDir.replace(/\/$/, "");
  if (stateDirProblem(own) === undefined) dirs.add(own);
  const out: string[] = [];
  for (const dir of dirs) {
    // The folder itself may be a tracked link or file: that is tracked state too.
    const slash = dir.lastIndexOf("/");
    const holder = await subtreeAt(
      repo,
      commit,
      inTree(repo, slash < 0 ? "" : dir.slice(0, slash)),
    );
    const top = holder?.entries.find((e) => e.path === dir.slice(slash + 1));
    if (top === undefined) continue;
    if (top.type !== "tree") {
      out.push(dir);
      continue;
    }
    const visit = async (oid: string, at: string): Promise<void> => {
      for (const entry of (await readTreeAt(repo, oid)).entries) {
        const path = `${at}/${entry.path}`;
        if (entry.type === "tree") await visit(entry.oid, path);
        else out.push(path);
      }
    };
    await visit(top.oid, dir);
  }
  return out;
}

async function headBranchOf(
  repo: GitRepo,
  options: GuardOptions,
): Promise<{ name: string | undefined; from: GuardResult["head_branch_from"] }> {
  if (options.headBranch !== undefined && options.headBranch !== "") {
    return { name: options.headBranch.replace(/^refs\/heads\//, ""), from: "option" };
  }
  const fromRef = await branchNameOf(repo, options.head);
  if (fromRef !== undefined) return { name: fromRef, from: "ref" };
  // A pull_request workflow checks out a merge ref; GitHub names the head branch here.
  const env = options.env ?? process.env;
  const fromEnv = env.GITHUB_ACTIONS === "true" ? env.GITHUB_HEAD_REF : undefined;
  if (fromEnv) return { name: fromEnv, from: "GITHUB_HEAD_REF" };
  return { name: undefined, from: null };
}

/** The head and base repositories: the options, else the Actions event of a pull request. */
function pullRequestRepos(options: GuardOptions): { head?: string; base?: string } {
  const given = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v);
  const head = given(options.headRepo);
  const base = given(options.baseRepo);
  if (head !== undefined || base !== undefined) {
    return { ...(head && { head }), ...(base && { base }) };
  }
  const env = options.env ?? process.env;
  if (env.GITHUB_ACTIONS !== "true" || !env.GITHUB_EVENT_PATH) return {};
  try {
    const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, "utf8")) as {
      pull_request?: {
        head?: { repo?: { full_name?: unknown } | null };
        base?: { repo?: { full_name?: unknown } | null };
      };
    };
    const pr = event.pull_request;
    if (pr === undefined) return {};
    const name = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
    // A deleted fork leaves `head.repo` null: unknown, so not this repository.
    const h = name(pr.head?.repo?.full_name);
    const b = name(pr.base?.repo?.full_name) ?? name(env.GITHUB_REPOSITORY);
    return { ...(h && { head: h }), ...(b && { base: b }) };
  } catch {
    return {};
  }
}

/** The config file the guard compares, relative to the engram repository. */
function repoConfigPath(options: GuardOptions): string {
  if (options.config === undefined) return CONFIG_PATH;
  const rel = relative(resolve(options.repo ?? "."), resolve(options.config));
  // `..ci/engram.toml` is the repository's: only `..` or a path under it is outside.
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    return CONFIG_PATH;
  }
  return rel.split("\\").join("/");
}

/** The config at a commit, defaults when absent or unreadable (the head's is checked elsewhere). */
async function configOrDefault(repo: GitRepo, commit: string, path: string): Promise<Config> {
  const file = await readFileAt(repo, commit, path);
  if (!file) return defaultConfig();
  try {
    return parseConfigText(file.text, path);
  } catch {
    return defaultConfig();
  }
}

async function configAt(repo: GitRepo, head: string, options: GuardOptions): Promise<Config> {
  if (options.config !== undefined) {
    return (await loadConfig(resolve(options.repo ?? "."), options.config)).config;
  }
  const file = await readFileAt(repo, head, CONFIG_PATH);
  if (!file) return defaultConfig();
  return parseConfigText(file.text, `${CONFIG_PATH} at ${options.head}`);
}

async function catalogStamp(repo: GitRepo, commit: string): Promise<CatalogStamp | undefined> {
  const file = await readFileAt(repo, commit, CATALOG_PATH);
  if (!file) return undefined;
  let version: number | undefined;
  let hash: string | undefined;
  try {
    const raw = JSON.parse(file.text) as { catalog_version?: unknown; hash?: unknown };
    if (typeof raw.catalog_version === "number") version = raw.catalog_version;
    if (typeof raw.hash === "string") hash = raw.hash;
  } catch {}
  return { blob: file.oid, version, hash };
}

/**
 * Inside GitHub Actions (`GITHUB_ACTIONS=true`): the annotation lines to print, and a short
 * Markdown summary appended to `$GITHUB_STEP_SUMMARY` when that is set. Elsewhere: nothing.
 */
export function reportToGitHub(
  result: GuardResult,
  refs: { base: string; head: string },
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (env.GITHUB_ACTIONS !== "true") return [];
  const summaryFile = env.GITHUB_STEP_SUMMARY;
  if (summaryFile) {
    appendFileSync(
      summaryFile,
      guardSummaryMarkdown(result.findings, {
        ...refs,
        headBranch: result.head_branch ?? undefined,
      }),
    );
  }
  return [
    ...result.findings.map((f) => githubAnnotation(f)),
    ...result.warnings.map((w) => githubAnnotation(w, "warning")),
  ];
}
