import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "./bins.js";

/**
 * A bare git repository driven with git plumbing: what the fake GitHub stores objects and
 * refs in. Synchronous on purpose: the fake answers one request at a time, like a real
 * server's transaction, and tests read the same repository with `git`.
 */

export interface TreeEntry {
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
}

export interface Person {
  name: string;
  email: string;
  /** ISO-8601, UTC, whole seconds. */
  date: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Person;
  committer: Person;
  message: string;
}

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
export const ZERO_SHA = "0".repeat(40);

/** Now, as GitHub writes times: ISO-8601 UTC without milliseconds. */
export function isoNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export class BareRepo {
  constructor(readonly dir: string) {}

  /** A new bare repository in the (empty) folder `dir`. */
  static init(dir: string, defaultBranch = "main"): BareRepo {
    const repo = new BareRepo(dir);
    repo.git(["init", "-q", "--bare", "-b", defaultBranch]);
    return repo;
  }

  git(
    args: readonly string[],
    options: { input?: string; env?: Record<string, string> } = {},
  ): string {
    return execFileSync("git", [...args], {
      cwd: this.dir,
      env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null", ...options.env }),
      encoding: "utf8",
      input: options.input,
      maxBuffer: 256 * 1024 * 1024,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }

  /** Exit status and output, without throwing. */
  private tryGit(args: readonly string[]): { status: number; stdout: string } {
    const r = spawnSync("git", [...args], {
      cwd: this.dir,
      env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    return { status: r.status ?? -1, stdout: r.stdout ?? "" };
  }

  /** The sha a full ref name (`refs/heads/main`) points at, or null. */
  refSha(ref: string): string | null {
    const r = this.tryGit(["rev-parse", "--verify", "--quiet", `${ref}^{}`]);
    return r.status === 0 ? r.stdout.trim() : null;
  }

  isEmpty(): boolean {
    return this.git(["for-each-ref", "--count=1"]).trim() === "";
  }

  /** `blob`, `tree`, `commit`, `tag`, or null when the object does not exist. */
  objectType(sha: string): string | null {
    if (!/^[0-9a-f]{40}$/.test(sha)) return null;
    const r = this.tryGit(["cat-file", "-t", sha]);
    return r.status === 0 ? r.stdout.trim() : null;
  }

  readCommit(sha: string): CommitInfo | null {
    if (this.objectType(sha) !== "commit") return null;
    const raw = this.git(["cat-file", "commit", sha]);
    const split = raw.indexOf("\n\n");
    const header = split < 0 ? raw : raw.slice(0, split);
    const message = split < 0 ? "" : raw.slice(split + 2);
    let tree = "";
    const parents: string[] = [];
    let author: Person | undefined;
    let committer: Person | undefined;
    for (const line of header.split("\n")) {
      const [key, ...rest] = line.split(" ");
      const value = rest.join(" ");
      if (key === "tree") tree = value;
      else if (key === "parent") parents.push(value);
      else if (key === "author") author = parsePerson(value);
      else if (key === "committer") committer = parsePerson(value);
    }
    if (author === undefined || committer === undefined) throw new Error(`bad commit ${sha}`);
    return { sha, tree, parents, author, committer, message };
  }

  /** Every blob and gitlink under `tree`, by full path. */
  flatten(tree: string): Map<string, TreeEntry> {
    const out = new Map<string, TreeEntry>();
    for (const record of this.git(["ls-tree", "-r", "-z", "--full-tree", tree]).split("\0")) {
      if (record === "") continue;
      const tab = record.indexOf("\t");
      const [mode, type, sha] = record.slice(0, tab).split(" ") as [
        string,
        TreeEntry["type"],
        string,
      ];
      out.set(record.slice(tab + 1), { mode, type, sha });
    }
    return out;
  }

  /** The top-level entries of `tree`, with blob sizes. */
  listTree(
    tree: string,
  ): { path: string; mode: string; type: string; sha: string; size?: number }[] {
    const out = [];
    for (const record of this.git(["ls-tree", "-l", "-z", tree]).split("\0")) {
      if (record === "") continue;
      const tab = record.indexOf("\t");
      const [mode, type, sha, size] = record
        .slice(0, tab)
        .split(" ")
        .filter((s) => s !== "") as [string, string, string, string];
      out.push({
        path: record.slice(tab + 1),
        mode,
        type,
        sha,
        ...(size !== "-" && { size: Number(size) }),
      });
    }
    return out;
  }

  /** Writes blobs (one git call for all of them) and returns their shas in order. */
  writeBlobs(contents: readonly Buffer[]): string[] {
    if (contents.length === 0) return [];
    const tmp = mkdtempSync(join(tmpdir(), "engram-fake-blobs-"));
    try {
      const files = contents.map((content, i) => {
        const file = join(tmp, String(i));
        writeFileSync(file, content);
        return file;
      });
      const shas = this.git(["hash-object", "-w", "--no-filters", "--stdin-paths"], {
        input: `${files.join("\n")}\n`,
      })
        .trim()
        .split("\n");
      return shas;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** Writes the tree holding exactly `entries` (full paths) and returns its sha. */
  writeTree(entries: ReadonlyMap<string, TreeEntry>): string {
    const tmp = mkdtempSync(join(tmpdir(), "engram-fake-index-"));
    try {
      const env = { GIT_INDEX_FILE: join(tmp, "index") };
      const records = [...entries].map(([path, e]) => `${e.mode} ${e.type} ${e.sha}\t${path}\0`);
      this.git(["update-index", "-z", "--index-info"], { input: records.join(""), env });
      return this.git(["write-tree"], { env }).trim();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  commitTree(
    tree: string,
    parents: readonly string[],
    message: string,
    author: Person,
    committer: Person,
  ): string {
    return this.git(["commit-tree", tree, ...parents.flatMap((p) => ["-p", p])], {
      input: message,
      env: {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_AUTHOR_DATE: author.date,
        GIT_COMMITTER_NAME: committer.name,
        GIT_COMMITTER_EMAIL: committer.email,
        GIT_COMMITTER_DATE: committer.date,
      },
    }).trim();
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    return this.tryGit(["merge-base", "--is-ancestor", ancestor, descendant]).status === 0;
  }

  /** Moves (or creates, with `expected` = ZERO_SHA) a ref only if it still holds `expected`. */
  updateRef(ref: string, sha: string, expected: string): boolean {
    return this.tryGit(["update-ref", ref, sha, expected]).status === 0;
  }

  /** The merged tree of two commits, or null on a conflict. */
  mergeTree(ours: string, theirs: string): string | null {
    const r = this.tryGit(["merge-tree", "--write-tree", "--no-messages", ours, theirs]);
    if (r.status === 0) return r.stdout.trim().split("\n")[0]!;
    if (r.status === 1) return null;
    throw new Error(`git merge-tree failed (${r.status})`);
  }

  /** Lines added and deleted, files changed and commits between `base` and `head`. */
  diffStats(
    base: string,
    head: string,
  ): { additions: number; deletions: number; files: number; commits: number } {
    const mergeBase = this.tryGit(["merge-base", base, head]).stdout.trim() || EMPTY_TREE;
    let additions = 0;
    let deletions = 0;
    let files = 0;
    for (const line of this.git(["diff", "--numstat", mergeBase, head]).split("\n")) {
      const [a, d] = line.split("\t");
      if (a === undefined || d === undefined) continue;
      files++;
      additions += Number(a) || 0;
      deletions += Number(d) || 0;
    }
    const commits = Number(this.git(["rev-list", "--count", `${base}..${head}`]).trim());
    return { additions, deletions, files, commits };
  }
}

function parsePerson(value: string): Person {
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(value);
  if (!m) throw new Error(`bad person line: ${value}`);
  const date = new Date(Number(m[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return { name: m[1]!, email: m[2]!, date };
}
