import { chmodSync, existsSync, lstatSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { CATALOG_PATH } from "../core/model/paths.js";
import { ConfigError, StateError } from "../errors.js";
import { STATE_DIR_MODE, STATE_FILE_MODE } from "./atomic.js";
import { entryKind } from "./entry-kind.js";
import type { StatePaths } from "./paths.js";

export { STATE_DIR_MODE, STATE_FILE_MODE };

/** `[state] dir` as given, and where the config that gave it is (for the message). */
export interface StateFolderSetting {
  repoDir: string;
  dir: string;
  /** The config file as shown to the user (`config/dev.toml`). */
  configFile: string;
  /** Whether the repository has been initialized (default: it has memory/catalog.json). */
  initialized?: boolean;
  /** Runs git (bounded, unattended: `gitAnswer` of src/git/git-child.ts). */
  git: GitRunner;
  /**
   * What the repository's files already answer for certain (src/git/state-answers.ts): a
   * question answered here starts no git. Absent or false: git is asked.
   */
  surely?: { untracked: boolean; ignored: boolean };
}

/** Git's exit code (-1: git could not run) and stdout in a folder. */
export type GitRunner = (
  cwd: string,
  args: readonly string[],
) => Promise<{ code: number; stdout: string }>;

/**
 * Checks the state folder where the repository is at hand (the config rule has already
 * checked its shape): no symbolic link on the way from the repository to it (nor the folder
 * itself), not tracked by git, ignored by git. Then closes it to other users (0700) if an
 * older version or another tool left it open. A ConfigError names `[state] dir` and says
 * what to do. Outside a git repository (or without git) only the links are checked.
 */
export async function checkStateFolder(setting: StateFolderSetting): Promise<void> {
  const { repoDir, configFile, git } = setting;
  const dir = setting.dir.replace(/\/$/, "");
  const refuse = (message: string): never => {
    throw new ConfigError(`${configFile}: state.dir: ${message}`, configFile, [
      { key: "state.dir", message },
    ]);
  };
  let at = repoDir;
  for (const part of dir.split("/")) {
    at = join(at, part);
    // A file on the way throws ENOTDIR here, which names the path (exit 3).
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined) break;
    if (st.isSymbolicLink()) {
      refuse(
        `${JSON.stringify(dir)}: ${relative(repoDir, at)} is a symbolic link; the state folder (and every folder on the way to it) must be a real folder in the repository: remove the link`,
      );
    }
  }
  const [tracked, ignored] = await Promise.all([
    setting.surely?.untracked === true
      ? { code: 0, stdout: "" }
      : git(repoDir, ["ls-files", "-z", "--", `${dir}/`]),
    setting.surely?.ignored === true
      ? { code: 0, stdout: "" }
      : git(repoDir, ["check-ignore", "-q", "--", `${dir}/`]),
  ]);
  // Not a git repository, or no git: nothing can be committed from it.
  if (tracked.code !== 0) return;
  const files = tracked.stdout.split("\0").filter((f) => f !== "");
  if (files.length > 0) {
    refuse(
      `${JSON.stringify(dir)}: git tracks ${files.length} file(s) in it (${files.slice(0, 3).join(", ")}); the state folder holds the journal and the seal key and must never be committed: untrack it (git rm -r --cached ${dir}), add /${dir}/ to .gitignore, and check where its seal key came from`,
    );
  }
  // Before `director init` (no catalog yet) nothing writes the state folder: init adds the
  // .gitignore line, then checks again.
  const initialized = setting.initialized ?? existsSync(join(repoDir, CATALOG_PATH));
  if (ignored.code === 1 && initialized) {
    refuse(
      `${JSON.stringify(dir)}: not ignored by git, so git add -A would commit the journal and the seal key: add /${dir}/ to .gitignore (director init does)`,
    );
  }
  const root = join(repoDir, dir);
  const st = existsSync(root) ? statSync(root) : undefined;
  if (!st?.isDirectory()) return;
  closeFolders(root);
  refuseLinksIn(root, dir);
}

/**
 * Closes the state folder and the folders in it to the user (0700) when they are open: a
 * folder restored from a cache or a branch, or copied, comes with the copier's modes, and
 * `mkdir` leaves a folder that exists as it is. Two levels: engram's folders are no deeper.
 */
function closeFolders(root: string): void {
  const close = (at: string, depth: number): void => {
    const st = lstatSync(at);
    if (!st.isDirectory()) return;
    if ((st.mode & 0o077) !== 0) chmodSync(at, STATE_DIR_MODE);
    if (depth >= 2) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) close(join(at, entry.name), depth + 1);
    }
  };
  close(root, 0);
}

/**
 * Throws when the state folder holds a symbolic link: engram never makes one there, and one
 * restored from a branch (the Action keeps the state folder on one) could point a read or a
 * truncation of the journal at any file. A FIFO, socket or device is refused the same way (a
 * read of a FIFO blocks for ever; an archive can hold one). Folder reads only (file types
 * come with the names); the spool's entries are set aside by the drain, a staging tree's
 * paths are checked as they are used.
 */
export function refuseLinksIn(root: string, shown: string): void {
  const visit = (at: string, rel: string, depth: number): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      const kind = entryKind(entry, join(at, entry.name));
      if (kind === "symbolic link") {
        throw new StateError(
          `${path}: a symbolic link in the state folder: engram never makes one there, and it is never followed; remove it (was the state folder restored from a branch?)`,
        );
      }
      if (kind !== "file" && kind !== "directory" && kind !== "unknown") {
        throw new StateError(
          `${path}: a ${kind} in the state folder: engram never makes one there, and a read of it could block for ever; remove it (was the state folder restored from an archive?)`,
        );
      }
      const skip = depth === 0 && (entry.name === "spool" || entry.name.startsWith("staging-"));
      if (kind === "directory" && !skip && depth < 4) visit(join(at, entry.name), path, depth + 1);
    }
  };
  visit(root, shown, 0);
}

/** What is left to do in a state folder: events not compacted yet, spool files not drained. */
export function unfinishedWork(paths: StatePaths): { events_bytes: number; spool_files: number } {
  const journal = lstatSync(paths.journal, { throwIfNoEntry: false });
  let spool = 0;
  try {
    spool = readdirSync(paths.spool).filter(
      (n) => n.endsWith(".ndjson") && !n.startsWith("."),
    ).length;
  } catch {}
  return { events_bytes: journal?.isFile() ? journal.size : 0, spool_files: spool };
}
