import { relative, resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import { ConfigError } from "../errors.js";
import { surelyIgnored, surelyUntracked } from "../git/state-answers.js";
import type { Config } from "../schema/config.js";
import {
  DEFAULT_STATE_DIR,
  type StatePaths,
  sharedSpoolPaths,
  statePaths,
} from "../state/paths.js";
import type { GitRunner } from "../state/state-folder.js";
import { mainWorktreeOf } from "./main-worktree.js";

/** What every command needs: where the repository is, its validated config, its state folder. */
export interface RepoContext {
  repoDir: string;
  config: Config;
  configPath: string;
  paths: StatePaths;
  /** The command line running this context, when there is one (absent in library use). */
  caller?: Caller | undefined;
  /**
   * When `repoDir` is a linked worktree (`git worktree add`): its main worktree, whose state
   * folder holds the spool and seal key of every worktree (`paths.spool`, `paths.sealKey`).
   */
  mainWorktree?: MainWorktree | undefined;
}

/** The main worktree of a linked worktree, and the `[state] dir` its own config names. */
export interface MainWorktree {
  repoDir: string;
  stateDir: string;
  configPath: string;
}

/** What a command line tells the library about itself, and how to tell its user something. */
export interface Caller {
  /** What runs, for others to see (`director run`), e.g. in the Director lock. */
  command: string;
  /** A line the user should see now (on stderr), e.g. that the command waits for a lock. */
  notice(message: string): void;
}

export interface RepoOptions {
  repo?: string | undefined;
  config?: string | undefined;
  caller?: Caller | undefined;
  /**
   * Check the state folder against git and the file system (default true). `director init`
   * checks it itself once it has written the .gitignore line that makes it ignored.
   */
  checkState?: boolean;
}

export async function openContext(options: RepoOptions): Promise<RepoContext> {
  const repoDir = resolve(options.repo ?? process.cwd());
  const loaded = await loadConfig(repoDir, options.config);
  const mainWorktree = await mainWorktreeState(repoDir);
  const own = statePaths(repoDir, loaded.config.state.dir);
  const ctx: RepoContext = {
    repoDir,
    config: loaded.config,
    configPath: loaded.path,
    paths: mainWorktree
      ? sharedSpoolPaths(own, statePaths(mainWorktree.repoDir, mainWorktree.stateDir))
      : own,
    ...(options.caller ? { caller: options.caller } : {}),
    ...(mainWorktree ? { mainWorktree } : {}),
  };
  if (options.checkState !== false) await checkContextState(ctx);
  return ctx;
}

/**
 * The main worktree of the linked worktree `repoDir`, with the state folder its own config
 * names (the Director there drains that folder's spool); undefined for any other checkout.
 */
async function mainWorktreeState(repoDir: string): Promise<MainWorktree | undefined> {
  const main = mainWorktreeOf(repoDir);
  if (main === undefined) return undefined;
  try {
    const loaded = await loadConfig(main);
    return { repoDir: main, stateDir: loaded.config.state.dir, configPath: loaded.path };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(
      `${main} (the main worktree, whose state folder holds this worktree's spool): ${error.message}`,
      error.file,
      error.problems,
      { cause: error },
    );
  }
}

/** What the repository's files answer for certain about the state folder (no git started). */
function surelyOf(repoDir: string, stateDir: string): { untracked: boolean; ignored: boolean } {
  const dir = stateDir.replace(/\/$/, "");
  return { untracked: surelyUntracked(repoDir, dir), ignored: surelyIgnored(repoDir, dir) };
}

/**
 * The state folder's checks against git and the file system (`checkStateFolder`), for the
 * main worktree's state folder too when this is a linked worktree, and a word when work was
 * left in the default state folder after `[state] dir` moved elsewhere.
 */
export async function checkContextState(ctx: RepoContext): Promise<void> {
  const { checkStateFolder, unfinishedWork } = await import("../state/state-folder.js");
  // Loaded only when a question needs git: the usual state folder is answered from files.
  const gitAnswer: GitRunner = async (cwd, args) =>
    (await import("../git/git-child.js")).gitAnswer(cwd, args);
  const dir = ctx.config.state.dir;
  await checkStateFolder({
    git: gitAnswer,
    surely: surelyOf(ctx.repoDir, dir),
    repoDir: ctx.repoDir,
    dir,
    configFile: relative(ctx.repoDir, ctx.configPath) || ctx.configPath,
  });
  const main = ctx.mainWorktree;
  if (main !== undefined) {
    await checkStateFolder({
      git: gitAnswer,
      surely: surelyOf(main.repoDir, main.stateDir),
      repoDir: main.repoDir,
      dir: main.stateDir,
      configFile: main.configPath,
    });
  }
  if (dir.replace(/\/$/, "") === DEFAULT_STATE_DIR || ctx.caller === undefined) return;
  const left = unfinishedWork(statePaths(ctx.repoDir, DEFAULT_STATE_DIR));
  if (left.events_bytes > 0 || left.spool_files > 0) {
    ctx.caller.notice(
      `${DEFAULT_STATE_DIR} still holds work of an earlier state folder (${left.events_bytes} bytes of events not compacted, ${left.spool_files} spool file(s)) while [state] dir is ${JSON.stringify(dir)}: it is not read from there; move ${DEFAULT_STATE_DIR}/buffer and ${DEFAULT_STATE_DIR}/spool into ${dir}/ with no Director running, or set [state] dir back`,
    );
  }
}
