import { relative, resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import type { Config } from "../schema/config.js";
import { DEFAULT_STATE_DIR, type StatePaths, statePaths } from "../state/paths.js";

/** What every command needs: where the repository is, its validated config, its state folder. */
export interface RepoContext {
  repoDir: string;
  config: Config;
  configPath: string;
  paths: StatePaths;
  /** The command line running this context, when there is one (absent in library use). */
  caller?: Caller | undefined;
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
  const ctx: RepoContext = {
    repoDir,
    config: loaded.config,
    configPath: loaded.path,
    paths: statePaths(repoDir, loaded.config.state.dir),
    ...(options.caller ? { caller: options.caller } : {}),
  };
  if (options.checkState !== false) await checkContextState(ctx);
  return ctx;
}

/**
 * The state folder's checks against git and the file system (`checkStateFolder`), and a
 * word when work was left in the default state folder after `[state] dir` moved elsewhere.
 */
export async function checkContextState(ctx: RepoContext): Promise<void> {
  const [{ checkStateFolder, unfinishedWork }, { gitAnswer }] = await Promise.all([
    import("../state/state-folder.js"),
    import("../git/git-child.js"),
  ]);
  const dir = ctx.config.state.dir;
  await checkStateFolder({
    git: gitAnswer,
    repoDir: ctx.repoDir,
    dir,
    configFile: relative(ctx.repoDir, ctx.configPath) || ctx.configPath,
  });
  if (dir.replace(/\/$/, "") === DEFAULT_STATE_DIR || ctx.caller === undefined) return;
  const left = unfinishedWork(statePaths(ctx.repoDir, DEFAULT_STATE_DIR));
  if (left.events_bytes > 0 || left.spool_files > 0) {
    ctx.caller.notice(
      `${DEFAULT_STATE_DIR} still holds work of an earlier state folder (${left.events_bytes} bytes of events not compacted, ${left.spool_files} spool file(s)) while [state] dir is ${JSON.stringify(dir)}: it is not read from there; move ${DEFAULT_STATE_DIR}/buffer and ${DEFAULT_STATE_DIR}/spool into ${dir}/ with no Director running, or set [state] dir back`,
    );
  }
}
