import { resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import type { Config } from "../schema/config.js";
import { type StatePaths, statePaths } from "../state/paths.js";

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
}

export async function openContext(options: RepoOptions): Promise<RepoContext> {
  const repoDir = resolve(options.repo ?? process.cwd());
  const loaded = await loadConfig(repoDir, options.config);
  return {
    repoDir,
    config: loaded.config,
    configPath: loaded.path,
    paths: statePaths(repoDir, loaded.config.state.dir),
    ...(options.caller ? { caller: options.caller } : {}),
  };
}
