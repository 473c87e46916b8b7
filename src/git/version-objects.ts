/**
 * Reads of version snapshots and logged versions through the user's own `git`, for commands
 * that must start fast (`worker recall --session`) and must not load the in-process git
 * library. Every call runs in the engram repository folder, so paths are relative to it.
 */
import { FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { VERSION_LOG_PATH, versionTag } from "../core/versions/log.js";
import { gitText, runGitChild } from "./git-child.js";

/** Git's stdout, or undefined when it fails (no such ref, not a repository, no git). */
function gitOut(cwd: string, args: readonly string[]): Promise<string | undefined> {
  return gitText(cwd, args);
}

/** The commit a revision names, or undefined (no such ref, or not a git repository). */
export async function commitOf(cwd: string, rev: string): Promise<string | undefined> {
  const out = await gitOut(cwd, ["rev-parse", "--verify", "-q", `${rev}^{commit}`]);
  return out?.trim() || undefined;
}

/** The snapshot commit of a version, when its tag exists. */
export function snapshotOf(cwd: string, version: number): Promise<string | undefined> {
  return commitOf(cwd, versionTag(version));
}

/** One file's text at a commit; `root`: the path is from the tree's root, not from `cwd`. */
export async function fileAt(
  cwd: string,
  commit: string,
  path: string,
  root = false,
): Promise<string | undefined> {
  return gitOut(cwd, ["cat-file", "blob", `${commit}:${root ? "" : "./"}${path}`]);
}

/**
 * Every file of memory/ and MEMORY.md at a commit: a snapshot (`root`: memory/ at the tree's
 * root) or a commit of the repository (memory/ under the engram folder). Two git processes:
 * one lists the blobs, one streams them.
 */
export async function memoryFilesOf(
  cwd: string,
  commit: string,
  root: boolean,
): Promise<Map<string, string>> {
  const prefix = root ? "" : ((await gitOut(cwd, ["rev-parse", "--show-prefix"]))?.trim() ?? "");
  const listing = await gitOut(cwd, [
    "ls-tree",
    "-r",
    "-z",
    "--full-tree",
    commit,
    "--",
    `${prefix}${MEMORY_DIR}`,
    `${prefix}${FOCUS_PATH}`,
  ]);
  const blobs: { oid: string; path: string }[] = [];
  for (const entry of (listing ?? "").split("\0")) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (m?.[2]?.startsWith(prefix))
      blobs.push({ oid: m[1] as string, path: m[2].slice(prefix.length) });
  }
  const texts = await catBlobs(
    cwd,
    blobs.map((b) => b.oid),
  );
  const files = new Map<string, string>();
  blobs.forEach((b, i) => {
    files.set(b.path, texts[i] as string);
  });
  return files;
}

/** Blob texts in order, through one `git cat-file --batch`. */
async function catBlobs(cwd: string, oids: readonly string[]): Promise<string[]> {
  if (oids.length === 0) return [];
  const { code, stdout: all } = await runGitChild(cwd, ["cat-file", "--batch"], {
    input: `${oids.join("\n")}\n`,
  });
  if (code !== 0) throw new Error(`git cat-file --batch exited with ${code}`);
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < oids.length; i++) {
    const eol = all.indexOf(10, at);
    const size = Number(all.subarray(at, eol).toString("latin1").split(" ")[2]);
    out.push(all.subarray(eol + 1, eol + 1 + size).toString("utf8"));
    at = eol + 1 + size + 1;
  }
  return out;
}

/**
 * Which first-parent commit of `main` brought each logged version onto it: the commit whose
 * change to the version log adds the version's line (for a merged PR, the merge). One `git
 * log` over the log file's history.
 */
export async function versionCommitsOn(cwd: string, main: string): Promise<Map<number, string>> {
  const out = await gitOut(cwd, [
    "log",
    "--first-parent",
    "-m",
    "-p",
    "--unified=0",
    "--no-color",
    "--format=%x1e%H",
    main,
    "--",
    VERSION_LOG_PATH,
  ]);
  const found = new Map<number, string>();
  // Newest first: an older commit adding the same version's line wins (it brought it first).
  for (const record of (out ?? "").split("\x1e")) {
    const [sha, ...lines] = record.split("\n");
    if (!sha || !/^[0-9a-f]{40}$/.test(sha.trim())) continue;
    for (const line of lines) {
      const m = /^\+\{.*"version":(\d+)\}\s*$/.exec(line);
      if (m && !line.startsWith("+++")) found.set(Number(m[1]), sha.trim());
    }
  }
  return found;
}

/** Every version snapshot tag: version to its commit and the catalog hash it records. */
export async function snapshotTags(
  cwd: string,
): Promise<Map<number, { commit: string; catalog_hash: string | null }>> {
  const out = await gitOut(cwd, [
    "for-each-ref",
    "--format=%(refname)%00%(objectname)%00%(contents)%1e",
    "refs/tags/engram/",
  ]);
  const tags = new Map<number, { commit: string; catalog_hash: string | null }>();
  for (const record of (out ?? "").split("\x1e")) {
    const [ref, commit, message] = record.replace(/^\n/, "").split("\0");
    const version = /^refs\/tags\/engram\/v(\d+)$/.exec(ref ?? "")?.[1];
    if (version === undefined || !commit) continue;
    const hash = /^Engram-Catalog: (sha256:[0-9a-f]+)$/m.exec(message ?? "")?.[1] ?? null;
    tags.set(Number(version), { commit, catalog_hash: hash });
  }
  return tags;
}
