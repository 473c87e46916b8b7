/**
 * `ingest --from-git`'s read of history: one `git log` through the user's git (simple-git)
 * for every commit, its message and its changed paths, then two small reads for the commits
 * that need them (what their manifests and CI, deployment and install files say,
 * content-reads.ts; the line counts of those that deleted source). isomorphic-git reads objects one by one, inflating each in JavaScript
 * and probing for it as a loose file first; over 10,000 packed commits that took 7 s or more
 * for the walk alone, where `git log` gives it all in a quarter of a second. */
import { GitError } from "simple-git";
import { isReadManifest } from "../core/history/dependencies.js";
import { type ChangedPath, type CommitChanges, pathKind } from "../core/history/evidence.js";
import type { GitCommitInfo } from "../core/history/git-events.js";
import { readsSettings } from "../core/history/settings.js";
import { StateError, UsageError } from "../errors.js";
import { type FileBlobs, type ReadFiles, readContentChanges } from "./content-reads.js";
import { runGitChild } from "./git-child.js";
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
 * parent (every file for a root commit), each with its status letter; the dependencies its
 * manifests added and removed; and, where it deleted source, the lines it added and deleted.
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
      // The status letter of each path (added, deleted, modified) is evidence for the
      // classifier (a tool's configuration deleted, a policy file added), and whole blob ids
      // let a manifest's or a workflow's before and after be read (content-reads.ts). Line counts would
      // make git diff every blob: they are read apart, for the few commits that need them.
      "--raw",
      "--no-abbrev",
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
  const reads: (ReadFiles | undefined)[] = [];
  for (const record of text.split(RS)) {
    if (record.trim() === "") continue;
    const [sha, parents, author, time, message, rest] = record.split(FS);
    if (sha === undefined || rest === undefined) continue;
    const { reads: read, ...changes } = rawChanges(rest);
    // A bot's commits are dependency bumps: their manifests name the same packages.
    reads.push(BOT_AUTHOR.test(author ?? "") ? undefined : read);
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
  for (const [i, content] of await readContentChanges(dir, reads)) {
    const changes = out[i]?.changes;
    if (changes !== undefined) Object.assign(changes, content);
  }
  // Whether a change that deleted source is mostly deletion (a part taken out, not reworked)
  // is the only question line counts answer: only those commits are diffed line by line.
  const deleting = out.filter((c) =>
    c.changes?.paths.some((p) => p.status === "D" && pathKind(p.path) === "source"),
  );
  const counts = await lineCounts(
    dir,
    deleting.map((c) => c.sha),
  );
  for (const c of deleting) {
    const n = counts.get(c.sha);
    if (n !== undefined && c.changes !== undefined) Object.assign(c.changes, n);
  }
  return out;
}

/**
 * The lines each commit added and deleted against its first parent (`--numstat`, summed; a
 * binary file counts none), in one `git log --no-walk --stdin`. Empty where git fails: the
 * counts are evidence, not the import.
 */
async function lineCounts(
  dir: string,
  shas: readonly string[],
): Promise<Map<string, { added: number; deleted: number }>> {
  const out = new Map<string, { added: number; deleted: number }>();
  if (shas.length === 0) return out;
  const answer = await runGitChild(
    dir,
    [
      "-c",
      "core.quotePath=false",
      "log",
      "--no-walk=unsorted",
      "--stdin",
      "--no-color",
      "--no-renames",
      "--diff-merges=first-parent",
      "--numstat",
      `--format=${RS}%H`,
    ],
    { input: `${shas.join("\n")}\n` },
  );
  if (answer.code !== 0) return out;
  for (const record of answer.stdout.toString("utf8").split(RS)) {
    const [sha = "", ...lines] = record.split("\n");
    if (!/^[0-9a-f]{40,64}$/.test(sha.trim())) continue;
    let added = 0;
    let deleted = 0;
    for (const line of lines) {
      const [plus, minus, path] = line.split("\t", 3);
      if (path === undefined) continue;
      added += lineCount(plus);
      deleted += lineCount(minus);
    }
    out.set(sha.trim(), { added, deleted });
  }
  return out;
}

const BOT_AUTHOR = /\[bot\]|\b(dependabot|renovate)\b/i;

/**
 * `--raw` lines (`:100644 100644 <oid> <oid> M<TAB>path`; no renames are asked for) as status
 * and path, and the files among them whose text is read, with their blob ids before and after.
 */
export function rawChanges(text: string): CommitChanges & { reads?: ReadFiles } {
  const paths: ChangedPath[] = [];
  const manifests: FileBlobs[] = [];
  const settings: FileBlobs[] = [];
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab <= 0 || !line.startsWith(":")) continue;
    const path = line.slice(tab + 1).trim();
    if (path === "") continue;
    paths.push({ status: line.slice(tab - 1, tab), path });
    const read = isReadManifest(path) ? manifests : readsSettings(path) ? settings : undefined;
    if (read !== undefined) {
      const [, , before = "", after = ""] = line.slice(1, tab).split(" ");
      read.push({ path, before, after });
    }
  }
  const any = manifests.length > 0 || settings.length > 0;
  return { paths, ...(any ? { reads: { manifests, settings } } : {}) };
}

function lineCount(field: string | undefined): number {
  const n = Number(field);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
