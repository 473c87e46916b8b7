import { realpathSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Env, Trust } from "../core/trust/destinations.js";
import type { RepoContext } from "./repo-context.js";
import { isWithin } from "./within.js";

/**
 * Who wrote the config of `ctx`, for the destination rules (src/core/trust/destinations.ts).
 * Only a file given with `--config` that lies outside the repository, by its name and by
 * where its links lead, is the user's own; `config/dev.toml` and anything else in the
 * repository may come from a pull request.
 */
export function trustOf(
  ctx: Pick<RepoContext, "repoDir" | "configPath">,
  env: Env = process.env,
): Trust {
  const repo = resolve(ctx.repoDir);
  const file = resolve(ctx.configPath);
  const shown = relativeOrAbsolute(repo, file);
  const userConfig =
    file !== join(repo, "config", "dev.toml") &&
    !isWithin(repo, file) &&
    !isWithin(realOrSelf(repo), realOrSelf(file));
  return { env, userConfig, file: shown };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function relativeOrAbsolute(repo: string, file: string): string {
  return isWithin(repo, file) ? relative(repo, file) : file;
}
