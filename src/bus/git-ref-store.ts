/**
 * Every git call of the git-ref transport, in one module. Two tools, one job each:
 * - simple-git runs the git the user already has for everything that talks to a remote
 *   (push, fetch), so the user's remotes, credential helpers, SSH setup and proxies apply;
 * - isomorphic-git reads and writes objects in process (blobs, trees and commits of event
 *   refs, local refs of the Director's mirror), never through the work tree or the index.
 */

import fs from "node:fs";
import git, { type TreeEntry } from "isomorphic-git";
import { simpleGit } from "simple-git";
import { ServiceError } from "../errors.js";
import type { GitRepo } from "../git/history.js";
import { objectFs } from "../git/object-fs.js";
import { userGitEnvironment } from "../git/remote.js";

/** Where writers push: one ref per writer process, under this prefix, on the shared remote. */
export const EVENTS_PREFIX = "refs/engram/events/";
/** The folder of the event files inside an event ref's tree. */
export const EVENTS_DIR = "events";

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A network operation that makes no progress this long is killed (a hung remote). */
const BLOCK_TIMEOUT_MS = 120_000;

/**
 * Runs git through simple-git in `dir`, returning the exit code and both outputs instead of
 * throwing, so a push's per-ref report can be read even when some refs were rejected.
 * The user's own `GIT_*` variables are passed on (see `userGitEnvironment`).
 */
export async function runGit(dir: string, args: readonly string[]): Promise<GitRun> {
  let failure: GitRun | undefined;
  const client = simpleGit({
    baseDir: dir,
    allowEnvironment: userGitEnvironment(),
    timeout: { block: BLOCK_TIMEOUT_MS },
    errors(error, result) {
      if (result.exitCode === 0) return undefined;
      failure = {
        code: result.exitCode,
        stdout: Buffer.concat(result.stdOut).toString("utf8"),
        stderr: Buffer.concat(result.stdErr).toString("utf8"),
      };
      // A spawn failure or a timeout has no exit code to report: keep simple-git's error.
      return result.exitCode === -1 || result.exitCode === undefined ? error : undefined;
    },
  });
  try {
    const stdout = await client.raw([...args]);
    return failure ?? { code: 0, stdout, stderr: "" };
  } catch (error) {
    return { code: -1, stdout: "", stderr: (error as Error).message };
  }
}

/** One ref update of a push: `to` null deletes; `expect` null means "must not exist yet". */
export interface RefUpdate {
  ref: string;
  to: string | null;
  expect: string | null;
}

export type PushOutcome =
  /** The remote answered: each ref was updated or rejected (by lease, by the remote). */
  | { reached: true; updated: Set<string>; rejected: Map<string, string> }
  /** The remote was not reached (or git failed before reporting per ref). */
  | { reached: false; reason: string };

/**
 * Pushes ref updates, each guarded by a lease (`--force-with-lease=<ref>:<expect>`): the
 * remote moves a ref only if it still holds what we expect, atomically per ref. Hooks of the
 * user's repository are skipped (an event push is no code push).
 */
export async function pushRefs(
  dir: string,
  remote: string,
  updates: readonly RefUpdate[],
): Promise<PushOutcome> {
  const args = ["push", "--porcelain", "--no-verify", "--no-signed", "--no-recurse-submodules"];
  for (const u of updates) args.push(`--force-with-lease=${u.ref}:${u.expect ?? ""}`);
  args.push("--", remote, ...updates.map((u) => `${u.to ?? ""}:${u.ref}`));
  const run = await runGit(dir, args);
  const statuses = parsePorcelain(run.stdout);
  if (statuses === undefined) return { reached: false, reason: firstLines(run.stderr) };
  const updated = new Set<string>();
  const rejected = new Map<string, string>();
  for (const u of updates) {
    const status = statuses.get(u.ref);
    if (status === undefined) rejected.set(u.ref, "no status reported");
    else if (status.flag === "!") rejected.set(u.ref, status.summary);
    else updated.add(u.ref);
  }
  return { reached: true, updated, rejected };
}

/** `git push --porcelain` output: `<flag>\t<from>:<to>\t<summary>` per ref after a `To` line. */
function parsePorcelain(
  stdout: string,
): Map<string, { flag: string; summary: string }> | undefined {
  const lines = stdout.split("\n");
  if (!lines.some((line) => line.startsWith("To "))) return undefined;
  const out = new Map<string, { flag: string; summary: string }>();
  for (const line of lines) {
    const m = /^(.)\t([^\t]*)\t(.*)$/.exec(line);
    if (!m) continue;
    const [, flag, spec, summary] = m as unknown as [string, string, string, string];
    const to = spec.slice(spec.lastIndexOf(":") + 1);
    out.set(to, { flag, summary });
  }
  return out;
}

/** The first lines of git's error output, for a fallback reason or an error message. */
export function firstLines(text: string, max = 2): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return lines.slice(0, max).join("; ") || "git failed without a message";
}

/**
 * Why git's answer is a mistake to fix rather than a bad day to wait out: no such remote or
 * repository, or a credential refused. Then nothing is spooled (a retry would fail the same
 * way, and a spooled note would wait for ever); anything else (a refused connection, a
 * timeout, a name that does not resolve while offline) is transient.
 */
export function permanentGitFailure(stderr: string): boolean {
  return PERMANENT.some((pattern) => pattern.test(stderr));
}

/**
 * Whether git's answer is a credential refused (or asked for where none could be given: no
 * helper, prompts off), as opposed to a remote that is not there.
 */
export function refusedCredential(stderr: string): boolean {
  return REFUSED_CREDENTIAL.some((pattern) => pattern.test(stderr));
}

const REFUSED_CREDENTIAL = [
  /Authentication failed/i,
  /Permission denied \(publickey/i,
  /could not read (Username|Password)/i,
  /The requested URL returned error: 40[13]/i,
  /Invalid username or (password|token)/i,
];

const PERMANENT = [
  /does not appear to be a git repository/i,
  /repository '[^']*' not found/i,
  /Repository not found/i,
  /The requested URL returned error: 404/i,
  ...REFUSED_CREDENTIAL,
];

/**
 * The remotes of the repository in `dir` when `remote` looks like a remote's name but names
 * none of them (a typo, `git:orgin`); undefined when it is one, or a URL or a path.
 */
export async function unknownRemote(dir: string, remote: string): Promise<string[] | undefined> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(remote)) return undefined;
  const run = await runGit(dir, ["remote"]);
  if (run.code !== 0) return undefined; // not a repository git can read: the push will say
  const remotes = run.stdout.split("\n").filter((r) => r !== "");
  if (remotes.includes(remote)) return undefined;
  return fs.existsSync(`${dir}/${remote}`) ? undefined : remotes;
}

/** The remote could not be read or written (network, authentication, a missing remote). */
export class RemoteUnreachable extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, "remote", options);
  }
}

/**
 * Fetches one remote ref into a local ref `into` (forced) and returns its commit, or null
 * when the remote has no such ref. Throws `RemoteUnreachable` when the remote cannot be read.
 */
export async function fetchOneRef(
  dir: string,
  remote: string,
  ref: string,
  into: string,
): Promise<"found" | "missing"> {
  const run = await runGit(dir, fetchArgs(remote, [`+${ref}:${into}`]));
  if (run.code === 0) return "found";
  if (/couldn't find remote ref/i.test(run.stderr)) return "missing";
  throw new RemoteUnreachable(firstLines(run.stderr));
}

/**
 * Mirrors every remote ref under `prefix` to local refs under `into` (forced; local refs whose
 * remote ref is gone are pruned). Throws `RemoteUnreachable` when the remote cannot be read.
 */
export async function mirrorRefs(
  dir: string,
  remote: string,
  prefix: string,
  into: string,
): Promise<void> {
  const run = await runGit(dir, fetchArgs(remote, [`+${prefix}*:${into}*`], true));
  if (run.code !== 0) throw new RemoteUnreachable(firstLines(run.stderr));
}

function fetchArgs(remote: string, refspecs: readonly string[], prune = false): string[] {
  return [
    "fetch",
    "--quiet",
    "--no-write-fetch-head",
    "--no-tags",
    "--no-recurse-submodules",
    ...(prune ? ["--prune"] : []),
    "--",
    remote,
    ...refspecs,
  ];
}

function objects(repo: GitRepo) {
  return { fs: objectFs, gitdir: repo.gitdir, cache: repo.cache };
}

/** An event file of an event ref: `events/<name>` and its blob. */
export interface EventFile {
  name: string;
  oid: string;
  /** `blob` for a file; anything else is foreign content, never read. */
  type: string;
}

/** The entries of `events/` in a commit's tree; empty when the tree has no such folder. */
export async function readEventFiles(repo: GitRepo, commit: string): Promise<EventFile[]> {
  let entries: TreeEntry[];
  try {
    entries = (await git.readTree({ ...objects(repo), oid: commit, filepath: EVENTS_DIR })).tree;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "NotFoundError" || code === "ObjectTypeError") return [];
    throw error;
  }
  return entries.map((e) => ({ name: e.path, oid: e.oid, type: e.type }));
}

export async function readBlob(repo: GitRepo, oid: string): Promise<Uint8Array> {
  return (await git.readBlob({ ...objects(repo), oid })).blob;
}

/** What an event commit says about itself (the writer identity is fixed: no git config needed). */
export interface CommitInfo {
  message: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/**
 * Writes a commit whose `events/` folder holds the base commit's event files plus `files`,
 * into the local object store only (no ref, no work tree, no index). With no base it is a
 * root commit holding just `files`.
 */
export async function writeEventCommit(
  repo: GitRepo,
  base: string | null,
  files: readonly { name: string; text: string }[],
  info: CommitInfo,
): Promise<string> {
  const entries = new Map<string, TreeEntry>();
  if (base !== null) {
    for (const f of await readEventFiles(repo, base)) {
      entries.set(f.name, {
        mode: f.type === "tree" ? "040000" : "100644",
        path: f.name,
        oid: f.oid,
        type: f.type as TreeEntry["type"],
      });
    }
  }
  for (const file of files) {
    const oid = await git.writeBlob({ ...objects(repo), blob: Buffer.from(file.text, "utf8") });
    entries.set(file.name, { mode: "100644", path: file.name, oid, type: "blob" });
  }
  const events = await git.writeTree({
    ...objects(repo),
    tree: [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  });
  const root = await git.writeTree({
    ...objects(repo),
    tree: [{ mode: "040000", path: EVENTS_DIR, oid: events, type: "tree" }],
  });
  const who = {
    name: "engram worker",
    email: "worker@engram.invalid",
    timestamp: info.timestamp,
    timezoneOffset: 0,
  };
  return git.writeCommit({
    ...objects(repo),
    commit: {
      message: info.message,
      tree: root,
      parent: base === null ? [] : [base],
      author: who,
      committer: who,
    },
  });
}

/** Local refs under `prefix` (loose and packed) and their commits, in name order. */
export async function listLocalRefs(repo: GitRepo, prefix: string): Promise<Map<string, string>> {
  const folder = prefix.replace(/\/+$/, "");
  const names = await git.listRefs({ fs, gitdir: repo.gitdir, filepath: folder });
  const out = new Map<string, string>();
  for (const name of names.sort()) {
    if (name.endsWith(".lock")) continue;
    const ref = `${folder}/${name}`;
    try {
      out.set(ref, await git.resolveRef({ fs, gitdir: repo.gitdir, ref }));
    } catch {
      // deleted meanwhile
    }
  }
  return out;
}

export async function resolveLocalRef(repo: GitRepo, ref: string): Promise<string> {
  return git.resolveRef({ fs, gitdir: repo.gitdir, ref });
}

export async function deleteLocalRef(repo: GitRepo, ref: string): Promise<void> {
  try {
    await git.deleteRef({ fs, gitdir: repo.gitdir, ref });
  } catch {
    // already gone
  }
}
