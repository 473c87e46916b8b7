import { createHash } from "node:crypto";
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, isAbsolute, join, relative, resolve, sep } from "node:path";
import fg from "fast-glob";
import { compileGlob, type GlobMatcher, GlobSyntaxError } from "../core/glob.js";
import type { Redactor } from "../core/ingest/redact.js";
import { FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import type { SyncCandidate } from "../core/sync/item.js";
import { itemHash, itemKey } from "../core/sync/item.js";
import {
  folderTag,
  folderTagOf,
  isEngramOutput,
  type MarkdownFolder,
  markdownItem,
  removedMarkdownItem,
} from "../core/sync/markdown.js";
import type { TargetQueue } from "../core/sync/queue.js";
import type { MarkdownSourceConfig } from "../schema/sources-config.js";
import { parseFrontmatter } from "./frontmatter.js";

/** What one scan of the markdown folders found, for the run's report and `--verbose`. */
export interface MarkdownReport {
  folders: number;
  /** Files matched by the globs (engram's own output excluded). */
  files: number;
  /** Queue keys with the file they stand for, by what happens to them. */
  new: FileRef[];
  changed: FileRef[];
  removed: FileRef[];
  unchanged: number;
  /** Unchanged since queued, but not delivered yet (the queue retries them). */
  waiting: number;
  /** New or changed files past `max_files_per_run`: queued by a later run. */
  deferred: number;
  /** Engram's own output met in a folder (MEMORY.md, generated files): never read in. */
  excluded: number;
  redactions: number;
  warnings: string[];
}

export interface FileRef {
  key: string;
  file: string;
}

export interface MarkdownScanOptions {
  repoDir: string;
  /** The state folder: never read, whatever a glob says. */
  stateDir: string;
  config: MarkdownSourceConfig;
  redactor: Redactor;
  project: string;
  /** Offer every file again, changed or not (`sync run --all`). */
  all?: boolean;
  /**
   * Folders outside the repository the user allows (`ENGRAM_ALLOW_FOLDERS`): a folder of the
   * config that leaves the repository is read only inside one of them.
   */
  allowedOutside?: readonly string[];
  /** The config is the user's own file (outside the repository): its folders are the user's. */
  userConfig?: boolean;
}

/** Folders outside the repository the user allows markdown to be read from. */
export const ALLOW_FOLDERS_VAR = "ENGRAM_ALLOW_FOLDERS";

/** The absolute folders of `ENGRAM_ALLOW_FOLDERS` (separated like PATH); relative ones are ignored. */
export function allowedFolders(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env[ALLOW_FOLDERS_VAR] ?? "")
    .split(delimiter)
    .map((p) => p.trim())
    .filter((p) => p !== "" && isAbsolute(p))
    .map(realOrSelf);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Only markdown, never a dotfile or a file in a dot folder (`.ssh/`, `.env.md`). */
function isMarkdownFile(rel: string): boolean {
  const parts = rel.split(/[/\\]/);
  return parts.every((p) => !p.startsWith(".")) && /\.md$/i.test(basename(rel));
}

export interface MarkdownScan {
  candidates: SyncCandidate[];
  report: MarkdownReport;
}

/**
 * Reads the configured folders: every matching file becomes a candidate when it is new or its
 * item changed (by the file's SHA-256), removed files become archive items, at most
 * `max_files_per_run` of them per run. The queue tells what was sent before (its records and
 * id mapping), so no other ledger is kept.
 */
export async function scanMarkdown(
  queue: TargetQueue,
  options: MarkdownScanOptions,
): Promise<MarkdownScan> {
  const { config } = options;
  const report: MarkdownReport = {
    folders: config.folders.length,
    files: 0,
    new: [],
    changed: [],
    removed: [],
    unchanged: 0,
    waiting: 0,
    deferred: 0,
    excluded: 0,
    redactions: 0,
    warnings: [],
  };
  const candidates: SyncCandidate[] = [];
  const previous = (key: string) =>
    queue.records[key]?.content_hash ?? queue.mapping[key]?.content_hash;
  const offer = (candidate: SyncCandidate, list: FileRef[], file: string): void => {
    if (candidates.length >= config.max_files_per_run) {
      report.deferred++;
      return;
    }
    candidates.push(candidate);
    list.push({ key: itemKey(candidate.item), file });
  };
  const seen = new Set<string>();
  const scanned = new Set<string>();
  const repoMemory = join(options.repoDir, MEMORY_DIR);
  const repoFocus = join(options.repoDir, FOCUS_PATH);
  const repoReal = realOrSelf(options.repoDir);
  const allowed = options.allowedOutside ?? [];
  for (const entry of config.folders) {
    const dir = isAbsolute(entry.path) ? entry.path : resolve(options.repoDir, entry.path);
    if (!isDirectory(dir)) {
      report.warnings.push(`[sources.markdown] ${entry.path}: folder not found; skipped`);
      continue;
    }
    // Where the folder really is, links followed: the repository's config may name only its own.
    const root = realOrSelf(dir);
    const own = within(root, repoReal) && within(resolve(dir), resolve(options.repoDir));
    if (!own && options.userConfig !== true && !allowed.some((a) => within(root, a))) {
      report.warnings.push(
        `[sources.markdown] ${entry.path}: outside the repository, and the repository's config ` +
          `may name only folders inside it; add ${root} to ${ALLOW_FOLDERS_VAR} to read it ` +
          "(docs/security.md); skipped",
      );
      continue;
    }
    scanned.add(folderTag(entry.path));
    const folder: MarkdownFolder = {
      path: entry.path,
      kind: entry.kind,
      group: entry.group,
      privacy: entry.privacy ?? config.privacy,
    };
    // The folder's globs come from the repository: they are matched by engram's linear-time
    // matcher, never compiled into regular expressions that could backtrack for ever.
    const globs: GlobMatcher[] = [];
    for (const glob of entry.globs) {
      try {
        globs.push(compileGlob(glob, "files"));
      } catch (error) {
        if (!(error instanceof GlobSyntaxError)) throw error;
        report.warnings.push(`[sources.markdown] ${entry.path}: glob ${error.message}; skipped`);
      }
    }
    const walked = await fg("**", {
      cwd: dir,
      onlyFiles: true,
      dot: true,
      followSymbolicLinks: false,
      suppressErrors: true,
      ignore: ["**/node_modules/**", "**/.git/**"],
    });
    const files = walked.filter((rel) => globs.some((g) => g.test(rel)));
    files.sort();
    for (const rel of files) {
      const path = join(dir, rel);
      const shown = `${entry.path}/${rel}`;
      if (path === repoFocus || inside(path, repoMemory) || inside(path, options.stateDir)) {
        report.excluded++;
        continue;
      }
      // Whatever the globs say: markdown only, and no link out of the folder.
      if (!isMarkdownFile(rel) || !within(realOrSelf(path), root)) {
        report.warnings.push(`${shown}: not a markdown file inside the folder; skipped`);
        continue;
      }
      let bytes: Buffer;
      try {
        if (statSync(path).size > config.max_file_bytes) {
          report.warnings.push(`${shown}: larger than max_file_bytes; skipped`);
          continue;
        }
        bytes = readFileSync(path);
      } catch (error) {
        report.warnings.push(`${shown}: not readable (${(error as Error).message}); skipped`);
        continue;
      }
      const text = bytes.toString("utf8");
      const frontmatter = parseFrontmatter(text);
      if (isEngramOutput(text, frontmatter.data)) {
        report.excluded++;
        continue;
      }
      report.files++;
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const made = markdownItem(
        { folder, relative: rel.split(sep).join("/"), frontmatter, sha256 },
        options.redactor,
        options.project,
      );
      report.redactions += made.redactions;
      if (frontmatter.warning !== null) {
        report.warnings.push(`${shown}: ${frontmatter.warning}; body synced`);
      }
      const key = itemKey(made.candidate.item);
      seen.add(key);
      const before = previous(key);
      if (before === itemHash(made.candidate.item) && options.all !== true) {
        if (queue.records[key]?.state === "pending") report.waiting++;
        else report.unchanged++;
        continue;
      }
      offer(made.candidate, before === undefined ? report.new : report.changed, shown);
    }
  }
  // A file the queue sent before, from a folder read now, that no glob matches any more.
  const known = new Set([...Object.keys(queue.mapping), ...Object.keys(queue.records)]);
  for (const key of [...known].sort()) {
    const localId = key.slice(key.indexOf(":") + 1);
    const tag = folderTagOf(localId);
    if (tag === null || !scanned.has(tag) || seen.has(key)) continue;
    const removed = removedMarkdownItem(localId);
    if (previous(key) === itemHash(removed.item)) continue;
    offer(removed, report.removed, localId);
  }
  return { candidates, report };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `path` is `dir` or below it. */
function within(path: string, dir: string): boolean {
  return path === dir || inside(path, dir);
}

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
