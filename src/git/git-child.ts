/**
 * How engram runs the user's own `git` as a child: never waiting on a person (no prompt,
 * pager or editor, stdin closed unless the command is given input), on the repository of
 * its folder (not one named by the environment), and never for longer than a bound: a git
 * that does not answer ends the command with an error naming it, instead of a silent hang.
 */
import { EngramError, StateError, UsageError } from "../errors.js";

/** How long a git child may stay silent and unfinished by default: `ENGRAM_GIT_TIMEOUT_MS`. */
export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

// Environment variables that say which repository git works on: engram opens the
// repository from its folder, so git must use that folder as well.
export const REPOSITORY_VARIABLES: ReadonlySet<string> = new Set([
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
]);

/**
 * What keeps git from waiting on someone who is not there. A value the user set is kept
 * (their own askpass, editor...), except the repository variables.
 */
const UNATTENDED: Readonly<Record<string, string>> = {
  // Credentials are asked on the terminal otherwise (it reads /dev/tty, not stdin).
  GIT_TERMINAL_PROMPT: "0",
  // Git Credential Manager's own dialogs.
  GCM_INTERACTIVE: "never",
  GIT_PAGER: "cat",
  GIT_EDITOR: ":",
  // A read never takes the index lock to refresh it (`git status` would).
  GIT_OPTIONAL_LOCKS: "0",
};

/** The environment of a git child: the caller's, unattended, without repository variables. */
export function gitChildEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (!REPOSITORY_VARIABLES.has(name.toUpperCase())) env[name] = value;
  }
  for (const [name, value] of Object.entries(UNATTENDED)) env[name] ??= value;
  return env;
}

/**
 * How long a git talking to a remote (push, fetch, ls-remote) may stay silent by default:
 * `ENGRAM_GIT_REMOTE_TIMEOUT_MS`. Long: a large push with `--quiet` says nothing until it ends.
 */
export const DEFAULT_GIT_REMOTE_TIMEOUT_MS = 600_000;

/** `ENGRAM_GIT_TIMEOUT_MS`, else the default; a bad value is a usage error of the environment. */
export function gitTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return millisecondsOf(env, "ENGRAM_GIT_TIMEOUT_MS", DEFAULT_GIT_TIMEOUT_MS);
}

/** `ENGRAM_GIT_REMOTE_TIMEOUT_MS`, else the default. */
export function gitRemoteTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return millisecondsOf(env, "ENGRAM_GIT_REMOTE_TIMEOUT_MS", DEFAULT_GIT_REMOTE_TIMEOUT_MS);
}

function millisecondsOf(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms <= 0) {
    throw new UsageError(`${name}: expected a positive number of milliseconds, got "${text}"`);
  }
  // A timer longer than this fires at once (Node clamps it to 1 ms): wait "for ever" instead.
  return Math.min(ms, 2_147_483_647);
}

export interface GitChildResult {
  /** The exit status; null when git was killed by a signal. */
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface GitChildOptions {
  /** Written to git's stdin, which is then closed; without it stdin is /dev/null. */
  input?: string;
  /** Default: `gitTimeoutMs()`. */
  timeoutMs?: number;
}

/** A git child that did not finish in time: killed, and named with what it waited for. */
export class GitTimeoutError extends StateError {}

/**
 * Runs `git args` in `cwd`. Resolves with the exit status and output (a failing status is
 * not an error: callers read it); rejects when git cannot be started, or with a
 * `GitTimeoutError` when it has neither finished (exited, and its output closed) nor written
 * anything for the bound: then it is killed, and the message names the command, the folder
 * and the likely causes.
 */
export function runGitChild(
  cwd: string,
  args: readonly string[],
  options: GitChildOptions = {},
): Promise<GitChildResult> {
  const timeoutMs = options.timeoutMs ?? gitTimeoutMs();
  return new Promise((resolve, reject) => {
    // Taken when first used: a command that starts no git does not load the module.
    const child = process.getBuiltinModule("node:child_process").spawn("git", [...args], {
      cwd,
      env: gitChildEnv(),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exited = false;
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      settle();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      // A process git started (a hook, a daemon) may hold the output open after git exits.
      child.stdout?.destroy();
      child.stderr?.destroy();
      const shown = `git ${args.join(" ")}`;
      const what = exited
        ? "exited, but a process it started kept its output open"
        : "did not finish (killed)";
      // The bound is on silence: a long history scan streams as it goes, a stuck git does not.
      finish(() =>
        reject(
          new GitTimeoutError(
            `${shown} (in ${cwd}) ${what}, silent for ${timeoutMs / 1000} s: is another git process holding the repository, a hook or credential helper waiting, or the disk stalled? Run the command by hand to see, or set ENGRAM_GIT_TIMEOUT_MS to wait longer`,
          ),
        ),
      );
    }, timeoutMs);
    child.on("error", (error) => finish(() => reject(error)));
    child.on("exit", () => {
      exited = true;
    });
    // Out of descriptors (EMFILE), Node sets up no pipes and reports it as an error event.
    if (!child.stdout || !child.stderr) return;
    child.stdout.on("data", (c: Buffer) => {
      out.push(c);
      timer.refresh();
    });
    child.stderr.on("data", (c: Buffer) => {
      err.push(c);
      timer.refresh();
    });
    child.on("close", (code) =>
      finish(() =>
        resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
      ),
    );
    if (options.input !== undefined) {
      // Git may exit before it has read everything (a bad revision): not our failure.
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(options.input);
    }
  });
}

/**
 * Git's exit code and stdout, for a check: code -1 when git cannot run at all (not
 * installed). A git that does not answer in time still throws its `GitTimeoutError`.
 */
export async function gitAnswer(
  cwd: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string }> {
  try {
    const r = await runGitChild(cwd, args);
    return { code: r.code ?? -1, stdout: r.stdout.toString("utf8") };
  } catch (error) {
    // Only a git that cannot start reads as "no answer"; a hang or a bad bound is said.
    if (error instanceof EngramError) throw error;
    return { code: -1, stdout: "" };
  }
}

/**
 * Git's stdout (UTF-8) when it succeeds; undefined when it fails or cannot run (no such
 * revision, not a repository, no git). A git that does not answer in time throws.
 */
export async function gitText(
  cwd: string,
  args: readonly string[],
  options: GitChildOptions = {},
): Promise<string | undefined> {
  try {
    const r = await runGitChild(cwd, args, options);
    return r.code === 0 ? r.stdout.toString("utf8") : undefined;
  } catch (error) {
    // Only a git that cannot start reads as "no answer"; a hang or a bad bound is said.
    if (error instanceof EngramError) throw error;
    return undefined;
  }
}

/** Git's stdout (UTF-8); a failure throws, naming the command and what git said. */
export async function gitOutput(cwd: string, args: readonly string[]): Promise<string> {
  const r = await runGitChild(cwd, args);
  if (r.code !== 0) {
    const said = r.stderr.trim().split("\n")[0] ?? "";
    throw new StateError(
      `git ${args.join(" ")} (in ${cwd}) failed with status ${r.code}${said ? `: ${said}` : ""}`,
    );
  }
  return r.stdout.toString("utf8");
}
