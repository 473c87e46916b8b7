import { CATALOG_PATH } from "../model/paths.js";
import { DIRECTOR_BRANCH_PREFIX, isMemoryPath } from "../trust/engram-branch.js";
import type { SecurityChange } from "../trust/security-keys.js";
import { compareFindings, type Finding, type FindingCode, formatFinding } from "./findings.js";
import type { ReviewFlag } from "./review-flags.js";

export { DIRECTOR_BRANCH_PREFIX, isMemoryPath };

/** Every kind of problem the PR guard reports: verify's, plus its own. */
export type GuardCode =
  | FindingCode
  | "single-writer"
  | "stale"
  | "security-config"
  | "foreign-commit"
  | "state-tracked"
  | "flagged-instruction"
  | "flagged-secret"
  | "flagged-sealed"
  | "flagged-contradiction"
  | "flagged-confidence";

/** One guard problem, shaped like a verify finding. */
export interface GuardFinding {
  path: string;
  code: GuardCode;
  message: string;
}

/** The identity of `memory/catalog.json` at one commit. */
export interface CatalogStamp {
  /** The git blob id: equal ids, equal catalogs. */
  blob: string;
  /** From the file when it parses, for the message. */
  version: number | undefined;
  hash: string | undefined;
}

/** What the guard decides on; the caller reads it from git. */
export interface GuardInput {
  /** The PR's head branch name, when known. */
  headBranch: string | undefined;
  /** Paths the PR changes (merge-base..head), relative to the engram repository. */
  changedPaths: readonly string[];
  /** The catalog at the base (main), undefined when absent. */
  baseCatalog: CatalogStamp | undefined;
  /** The catalog where the head branch left the base, undefined when absent. */
  mergeBaseCatalog: CatalogStamp | undefined;
  /** `verifyMemory` on the memory tree at the head. */
  verifyFindings: readonly Finding[];
  /** The config file the security keys were compared in (repository-relative). */
  configPath?: string;
  /** Security-relevant config keys the branch changes (src/core/trust/security-keys.ts). */
  securityChanges?: readonly SecurityChange[];
  /** Markdown folders the head's config names outside the repository. */
  outsideFolders?: readonly string[];
  /** On a Director branch: its commits engram did not make. */
  foreignCommits?: readonly { sha: string; reason: string }[];
  /** Review flags on the engrams the head adds, with each engram's file. */
  flagged?: readonly FlaggedAt[];
}

/**
 * A review flag and the engram file it is in; `released` when the engram records that a
 * reviewer released the item from the secret hold (`director release`).
 */
export type FlaggedAt = ReviewFlag & { path: string; released?: true };

/** Whether a head branch is one the Director writes. */
export function isDirectorBranch(name: string | undefined): boolean {
  return name?.startsWith(DIRECTOR_BRANCH_PREFIX) === true;
}

/**
 * The PR check: the head's memory tree must verify; a worker branch must not touch memory;
 * a Director branch must start from main's current catalog and hold only the Director's
 * commits; no branch changes a security-relevant config key unreviewed. Pure; findings
 * sorted like verify's.
 */
export function guardFindings(input: GuardInput): GuardFinding[] {
  const findings: GuardFinding[] = [...input.verifyFindings];
  const config = input.configPath ?? "config/dev.toml";
  const outside = input.outsideFolders ?? [];
  for (const change of input.securityChanges ?? []) {
    const away =
      change.key === "sources.markdown.folders" && outside.length > 0
        ? `; it names folders outside the repository (${outside.join(", ")}), which only the user may name (ENGRAM_ALLOW_FOLDERS)`
        : "";
    findings.push({
      path: config,
      code: "security-config",
      message:
        `${change.key} changed from ${JSON.stringify(change.before) ?? "unset"} to ` +
        `${JSON.stringify(change.after) ?? "unset"}: it decides where credentials or memory go ` +
        `or what is read or written (docs/security.md); a maintainer must review it${away}`,
    });
  }
  for (const commit of input.foreignCommits ?? []) {
    findings.push({
      path: `commit ${commit.sha.slice(0, 12)}`,
      code: "foreign-commit",
      message: `on the Director's branch ${input.headBranch ?? ""}, but not the Director's: ${commit.reason}`,
    });
  }
  // A planted instruction or a leaked secret must not pass: they fail the guard.
  for (const flag of input.flagged ?? []) {
    if (onlyWarns(flag)) continue;
    findings.push(flagFinding(flag));
  }
  if (!isDirectorBranch(input.headBranch)) {
    for (const path of [...new Set(input.changedPaths)].filter(isMemoryPath)) {
      findings.push({
        path,
        code: "single-writer",
        message:
          "changed by a branch that is not the Director's: only the Director writes memory; " +
          "workers treat memory/** and MEMORY.md as read-only",
      });
    }
  } else if (input.baseCatalog?.blob !== input.mergeBaseCatalog?.blob) {
    const moved = input.baseCatalog;
    const where = moved
      ? `version ${moved.version ?? "?"} (${moved.hash ?? "unreadable hash"})`
      : "nothing (it was removed)";
    findings.push({
      path: CATALOG_PATH,
      code: "stale",
      message: `stale: main's catalog moved to ${where} since this branch was made; the Director regenerates it`,
    });
  }
  return findings.sort(compareFindings);
}

/**
 * The review flags that only warn: sealed or sensitive engrams, which a reviewer must open
 * with the seal key but which are not wrong in themselves, decisions that contradict
 * current memory, which a reviewer settles (either may hold), and decisions stated below the
 * confidence floor. Sorted like findings.
 */
export function flagWarnings(flagged: readonly FlaggedAt[]): GuardFinding[] {
  return flagged.filter(onlyWarns).map(flagFinding).sort(compareFindings);
}

function onlyWarns(flag: FlaggedAt): boolean {
  return (
    flag.kind === "sealed" ||
    flag.kind === "contradiction" ||
    flag.kind === "confidence" ||
    flag.released === true
  );
}

function flagFinding(flag: FlaggedAt): GuardFinding {
  const item = flag.item_kind === "engram" ? "the engram" : `${flag.item_kind} "${flag.text}"`;
  return {
    path: flag.path,
    code: `flagged-${flag.kind}`,
    message: flag.released
      ? `${item} ${flag.why} (${flag.reason}); a reviewer released it (director release), so it does not fail the guard`
      : `${item} ${flag.why} (${flag.reason}); review it before merging (docs/github.md)`,
  };
}

/**
 * Files a branch tracks in the state folder (`.engram`, and the `[state] dir` of its own
 * config): the journal, the spool and the seal key must never be committed, and a branch that
 * ships them (its own seal key above all) is refused. Pure: the caller lists the paths.
 */
export function trackedStateFindings(tracked: readonly string[]): GuardFinding[] {
  return [...new Set(tracked)].sort().map((path) => ({
    path,
    code: "state-tracked" as const,
    message:
      "is in the state folder and tracked by this branch: the journal, spool and seal key never belong in git; remove it from the branch (a seal key that was pushed is known: never use it)",
  }));
}

/** One line per finding, as verify prints them: `<path>: <message>`. */
export const formatGuardFinding: (f: GuardFinding) => string = formatFinding;

// GitHub workflow commands: `%`, CR and LF are escaped everywhere, `:` and `,` in properties.
function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** One GitHub Actions annotation line: `::error file=<path>::<message>` (or `::warning`). */
export function githubAnnotation(f: GuardFinding, level: "error" | "warning" = "error"): string {
  return `::${level} file=${escapeProperty(f.path)}::${escapeData(`${f.code}: ${f.message}`)}`;
}

/** A short Markdown report for `$GITHUB_STEP_SUMMARY`. */
export function guardSummaryMarkdown(
  findings: readonly GuardFinding[],
  context: { base: string; head: string; headBranch: string | undefined },
): string {
  const branch = context.headBranch ?? "(unknown branch)";
  const title = `### engram guard: ${findings.length === 0 ? "ok" : `${findings.length} finding(s)`}`;
  const lines = [title, "", `\`${branch}\` at \`${context.head}\` against \`${context.base}\``, ""];
  if (findings.length > 0) {
    lines.push("| path | code | message |", "|---|---|---|");
    for (const f of findings) {
      lines.push(`| \`${cell(f.path)}\` | ${f.code} | ${cell(f.message)} |`);
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/[\r\n`]/g, " ");
}
