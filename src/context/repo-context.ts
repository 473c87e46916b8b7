import { resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import { createRedactor, type Redactor } from "../core/ingest/redact.js";
import type { Config } from "../schema/config.js";
import { type StatePaths, statePaths } from "../state/paths.js";

/** What every command needs: where the repository is, its validated config, its state folder. */
export interface RepoContext {
  repoDir: string;
  config: Config;
  configPath: string;
  paths: StatePaths;
}

export interface RepoOptions {
  repo?: string | undefined;
  config?: string | undefined;
}

export async function openContext(options: RepoOptions): Promise<RepoContext> {
  const repoDir = resolve(options.repo ?? process.cwd());
  const loaded = await loadConfig(repoDir, options.config);
  return {
    repoDir,
    config: loaded.config,
    configPath: loaded.path,
    paths: statePaths(repoDir, loaded.config.state.dir),
  };
}

export function redactorFor(config: Config): Redactor {
  return createRedactor(config.redaction.patterns);
}
