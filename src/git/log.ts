/**
 * `ingest --from-git`'s one read of history: a single `git log` through the user's git
 * (simple-git). isomorphic-git reads objects one by one, inflating each in JavaScript and
 * probing for it as a loose file first; over 10,000 packed commits that took 7 s or more for
 * the walk alone, where `git log` gives every commit, its message and its changed paths in
 * a quarter of a second.
 */
import { GitError } from "simple-git";
import type { ChangedPath, CommitChanges } from "../core/history/evidence.js";
import type { GitCommitInfo } from "../core/history/git-events.js";
import { StateError, UsageError } from "../errors.js";
import { gitAt } from "./remote.js";

// Record and field separators: characters no commit message or path is expected to hold.
const RS = "\x1e";
const FS = "\x1f";
const FORMAT = `${RS}%H${FS}%P${FS}%an <%ae>${FS}%ct${FS}%B${FS}`;

/** Checks a range as `A..B` (an empty side is HEAD) or one revision; `A...B` is refused. */
export function checkRange(range: string): string {
  const trimmed = range.trim();
  if (trimmed.includes("...")) {
    throw new UsageError(`${range}: symmetric ranges (A...B) are not supported; use A..B`);
  }
  const parts = trimmed.split("..");
  if (parts.length > 2) throw new UsageError(`${range}: expected A..B or a single revision`);
  if (trimmed === "" || parts.some((p) => p.trim().startsWith("-") || /\s/.test(p.trim()))) {
    throw new UsageError(`'${range}': expected A..B or a single revision`);
  }
  return parts.map((p) => (p.trim() === "" ? "HEAD" : p.trim())).join("..");
}

/**
 * The commits of a range, oldest first (the commits of B not reachable from A, as `git
 * rev-list A..B`), each with its parents, author and the paths it changed against its first
 * parent (every file for a root commit), each with its status letter, and the lines added and
 * deleted.
 */
export async function logRange(dir: string, range: string): Promise<GitCommitInfo[]> {
  const rev = checkRange(range);
  let text: string;
  try {
    text = await gitAt(dir).raw([
      // The user's config must not change what is parsed.
      "-c",
      "core.quotePath=false",
      "-c",
      "log.showSignature=false",
      "log",
      "--no-color",
      "--no-mailmap",
      "--reverse",
      "--root",
      "--no-renames",
      "--diff-merges=first-parent",
      // The status letter of each path (added, deleted, modified) and the lines added and
      // deleted are evidence for the classifier (a tool's configuration deleted, a part taken
      // out): `--raw` gives the letters, `--numstat` the lines (`--name-status` would hide them).
      "--raw",
      "--numstat",
      `--format=${FORMAT}`,
      "--end-of-options",
      rev,
      "--",
    ]);
  } catch (error) {
    if (error instanceof GitError) {
      const detail = error.message.trim().split("\n")[0] ?? "";
      if (
        /unknown revision|bad revision|ambiguous argument|bad object|invalid object/i.test(
          error.message,
        )
      ) {
        throw new StateError(`${range}: no branch, tag or commit of that name (${detail})`);
      }
      throw new StateError(`git log ${rev}: ${detail}`);
    }
    throw error;
  }
  const out: GitCommitInfo[] = [];
  for (const record of text.split(RS)) {
    if (record.trim() === "") continue;
    const [sha, parents, author, time, message, rest] = record.split(FS);
    if (sha === undefined || rest === undefined) continue;
    const changes = changedPaths(rest);
    out.push({
      sha,
      message: message ?? "",
      committedAt: Number(time),
      files: changes.paths.map((c) => c.path).sort(),
      changes,
      parents: parents?.trim() === "" ? 0 : (parents ?? "").trim().split(" ").length,
      parentShas: (parents ?? "")
        .trim()
        .split(" ")
        .filter((p) => p !== ""),
      author: author ?? "",
    });
  }
  return out;
}

/**
 * `--raw` lines (`:100644 100644 <oid> <oid> M<TAB>path`; no renames are asked for) as status
 * and path, and `--numstat` lines (`added<TAB>deleted<TAB>path`, `-` for a binary file) summed.
 */
function changedPaths(text: string): CommitChanges {
  const paths: ChangedPath[] = [];
  let added = 0;
  let deleted = 0;
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab <= 0) continue;
    if (line.startsWith(":")) {
      const path = line.slice(tab + 1).trim();
      if (path !== "") paths.push({ status: line.slice(tab - 1, tab), path });
      continue;
    }
    const [plus, minus] = line.split("\t", 2);
    added += lineCount(plus);
    deleted += lineCount(minus);
  }
  return { paths, added, deleted };
}

function lineCount(field: string | undefined): number {
  const n = Number(field);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
