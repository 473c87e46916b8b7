import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CATALOG_PATH } from "../core/model/paths.js";
import { fileSystemError, StateError } from "../errors.js";

/**
 * Which repository a command works on, found as git finds it: `--repo DIR` as given (it must
 * be an existing git work tree: the folder holding `.git`), else the nearest folder holding
 * `.git` from `cwd` up. Never creates anything: a wrong folder is a StateError saying so.
 */
export function findRepository(repo: string | undefined, cwd: string): string {
  if (repo === undefined) {
    const top = enclosingWorkTree(cwd);
    if (top === undefined) {
      throw new StateError(
        `${cwd}: not inside a git work tree; run the command in your repository (after git init there), or pass --repo DIR`,
        { code: "not_a_repository" },
      );
    }
    return top;
  }
  const dir = resolve(cwd, repo);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    const fs = fileSystemError(error, `--repo ${repo}`);
    if (fs?.errno === "ENOENT") {
      throw new StateError(`--repo ${repo}: no such folder; give the folder of a git work tree`, {
        code: "not_a_repository",
        cause: error,
      });
    }
    throw fs ?? error;
  }
  if (!isDir) {
    throw new StateError(`--repo ${repo}: not a folder; give the folder of a git work tree`, {
      code: "not_a_repository",
    });
  }
  if (existsSync(join(dir, ".git"))) return dir;
  const top = enclosingWorkTree(dir);
  throw new StateError(
    top === undefined
      ? `--repo ${repo}: not a git work tree (no .git there or above); run git init there first, or give another folder`
      : `--repo ${repo}: not the top of a git work tree; the work tree is ${top}: pass --repo ${top}, or leave --repo out`,
    { code: "not_a_repository" },
  );
}

/** The nearest folder holding `.git` (a folder, or a file in a linked worktree) from `dir` up. */
function enclosingWorkTree(dir: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * Throws unless `director init` has laid the repository out: it has the config file (the
 * default one, or the explicit `--config`) or a memory catalog.
 */
export function requireInitialized(repoDir: string, configPath: string | undefined): void {
  const config =
    configPath === undefined ? join(repoDir, "config", "dev.toml") : resolve(configPath);
  if (existsSync(config) || existsSync(join(repoDir, CATALOG_PATH))) return;
  throw new StateError(
    `${repoDir}: engram is not set up in this repository (no config/dev.toml, no ${CATALOG_PATH}); run director init first`,
    { code: "not_initialized" },
  );
}
