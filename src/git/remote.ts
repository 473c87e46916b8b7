/**
 * The git operations that go through the user's own git (simple-git): talking to remotes
 * with the user's remotes and credentials, and compare-and-swap ref updates, which git
 * performs atomically under its ref lock. Objects are built in process by objects.ts.
 */
import { type SimpleGit, simpleGit } from "simple-git";
import { ServiceError, StateError } from "../errors.js";
import { gitRemoteTimeoutMs, REPOSITORY_VARIABLES } from "./git-child.js";

const ZERO = "0000000000000000000000000000000000000000";

/**
 * The user's own `GIT_*` variables (GIT_SSH_COMMAND, GIT_ASKPASS, GIT_AUTHOR_NAME,
 * GIT_CONFIG_GLOBAL...): simple-git drops every ambient `GIT_*` variable unless it is
 * allowed, and these carry the user's credentials, identity and config.
 */
export function userGitEnvironment(): string[] {
  return Object.keys(process.env).filter(
    (name) =>
      name.toUpperCase().startsWith("GIT_") && !REPOSITORY_VARIABLES.has(name.toUpperCase()),
  );
}

/**
 * The user's git in `dir`; `timeoutMs` kills a command that stays silent that long (by
 * default `ENGRAM_GIT_REMOTE_TIMEOUT_MS`: a remote that stalls never holds the Director, and
 * its lock, for good).
 */
export function gitAt(dir: string, timeoutMs = gitRemoteTimeoutMs()): SimpleGit {
  return simpleGit({
    baseDir: dir,
    trimmed: true,
    allowEnvironment: userGitEnvironment(),
    timeout: { block: timeoutMs },
  });
}

/** `git args` against a remote; a stall or a failure is the remote's error, naming the command. */
async function remoteRaw(dir: string, args: readonly string[]): Promise<string> {
  try {
    return await gitAt(dir).raw([...args]);
  } catch (error) {
    throw new ServiceError(
      `git ${args.slice(0, 2).join(" ")}: ${firstLine(messageOf(error))}`,
      "remote",
      {
        cause: error,
      },
    );
  }
}

/**
 * Fetches `origin` when there is one and it answers within `timeoutMs`: best effort, so a
 * worker offline still works with the refs it has. Only remote-tracking refs move.
 */
export async function fetchOrigin(dir: string, timeoutMs = 15_000): Promise<boolean> {
  try {
    if (!(await remoteExists(dir, "origin"))) return false;
    await gitAt(dir, timeoutMs).raw(["fetch", "--quiet", "--no-tags", "origin"]);
    return true;
  } catch {
    return false;
  }
}

export async function remoteExists(dir: string, name: string): Promise<boolean> {
  const names = (await gitAt(dir).raw(["remote"])).split("\n").map((n) => n.trim());
  return names.includes(name);
}

/** The remote's heads for the given branch names (absent ones are missing from the map). */
export async function remoteHeads(
  dir: string,
  remote: string,
  branches: readonly string[],
): Promise<Map<string, string>> {
  const text = await remoteRaw(dir, [
    "ls-remote",
    "--heads",
    remote,
    ...branches.map((b) => `refs/heads/${b}`),
  ]);
  const heads = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [sha, ref] = line.split("\t");
    if (sha && ref?.startsWith("refs/heads/")) heads.set(ref.slice("refs/heads/".length), sha);
  }
  return heads;
}

/** Fetches branches into `refs/remotes/<remote>/<branch>` (forced: the remote is the truth). */
export async function fetchBranches(
  dir: string,
  remote: string,
  branches: readonly string[],
): Promise<void> {
  if (branches.length === 0) return;
  await remoteRaw(dir, [
    "fetch",
    "--no-tags",
    "--quiet",
    remote,
    ...branches.map((b) => `+refs/heads/${b}:refs/remotes/${remote}/${b}`),
  ]);
}

/**
 * Moves a local ref from `expected` (null: it must not exist) to `next` in one atomic step;
 * false when another writer moved it first.
 */
export async function compareAndSwapRef(
  dir: string,
  ref: string,
  next: string,
  expected: string | null,
): Promise<boolean> {
  try {
    await gitAt(dir).raw(["update-ref", ref, next, expected ?? ZERO]);
    return true;
  } catch (error) {
    if (/cannot lock ref|but expected|reference already exists/i.test(messageOf(error))) {
      return false;
    }
    throw new StateError(`git update-ref ${ref}: ${firstLine(messageOf(error))}`);
  }
}

export type PushOutcome = { pushed: true } | { pushed: false; reason: string };

/**
 * Pushes `sha` to the remote branch only if the branch is still at `expected` (null: absent),
 * so an older Director never overwrites a newer proposal: `--force-with-lease` is the
 * remote's compare-and-swap. A lost race is an outcome, not an error.
 */
export async function pushWithLease(
  dir: string,
  remote: string,
  branch: string,
  sha: string,
  expected: string | null,
): Promise<PushOutcome> {
  const ref = `refs/heads/${branch}`;
  try {
    await gitAt(dir).raw([
      "push",
      "--quiet",
      "--porcelain",
      `--force-with-lease=${ref}:${expected ?? ""}`,
      remote,
      `${sha}:${ref}`,
    ]);
    return { pushed: true };
  } catch (error) {
    const message = messageOf(error);
    if (/stale info|rejected|fetch first|non-fast-forward|already exists/i.test(message)) {
      return { pushed: false, reason: firstLine(message) };
    }
    throw new PushError(
      `git push ${remote} ${branch}: ${firstLine(message)} (the proposal stays staged and is pushed by the next run)`,
    );
  }
}

/** The remote could not be reached or refused for a reason other than a lost race. */
export class PushError extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, "remote", options);
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // simple-git's words for a git it killed for staying silent (`gitAt`'s bound).
  return message === "block timeout reached"
    ? `no answer from the remote for ${gitRemoteTimeoutMs() / 1000} s: stopped (ENGRAM_GIT_REMOTE_TIMEOUT_MS)`
    : message;
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0 && !l.startsWith("To ")) ?? text
  );
}

/**
 * Pushes tags as they are, never forced: a tag the remote already has with other content is
 * left there (the push of that tag fails, the others go). Best effort: false on any failure.
 */
export async function pushTags(
  dir: string,
  remote: string,
  tags: readonly string[],
): Promise<boolean> {
  if (tags.length === 0) return true;
  try {
    await gitAt(dir).raw([
      "push",
      "--quiet",
      "--porcelain",
      remote,
      ...tags.map((t) => `${t}:${t}`),
    ]);
    return true;
  } catch {
    return false;
  }
}

/** The tag names under `prefix` the remote has (empty when it cannot be asked). */
export async function remoteTagNames(
  dir: string,
  remote: string,
  prefix: string,
): Promise<Set<string>> {
  try {
    const out = await gitAt(dir, 15_000).raw(["ls-remote", "--tags", remote, `${prefix}*`]);
    return new Set(
      out
        .split("\n")
        .map((line) => line.split("\t")[1]?.trim() ?? "")
        .filter((ref) => ref.startsWith(prefix) && !ref.endsWith("^{}")),
    );
  } catch {
    return new Set();
  }
}
