import { lstatSync, mkdirSync, readFileSync, realpathSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { fileSystemError } from "../../errors.js";
import { fsyncDirSync, writeFileAtomicSync } from "../../state/atomic.js";
import { planSetup, type SetupPlan, type SetupRequest, setupTargets } from "./plan.js";

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw fileSystemError(error, path, "read") ?? error;
  }
}

/** Reads the files a setup touches and plans it: nothing is written. */
export function readAndPlanSetup(request: SetupRequest): SetupPlan {
  const contents = new Map<string, string | undefined>();
  for (const target of setupTargets(request)) contents.set(target.path, readIfExists(target.path));
  return planSetup(request, contents);
}

/**
 * Writes a plan: each changed file atomically (temp file, fsync, rename), keeping an existing
 * file's mode, through a symbolic link to the file it names; a file left empty is removed. Every file was planned (and parsed) before the
 * first write, so a file that does not parse stops the setup before anything changes.
 */
export function applySetup(plan: SetupPlan): void {
  for (const file of plan.files) {
    try {
      if (file.action === "unchanged") continue;
      // A settings file linked from a dotfiles folder stays a link: the file it names changes.
      const linked = file.action !== "create" && lstatSync(file.path).isSymbolicLink();
      const path = linked ? realpathSync(file.path) : file.path;
      if (file.action === "delete") {
        unlinkSync(path);
        fsyncDirSync(dirname(path));
        if (linked) unlinkSync(file.path);
        continue;
      }
      let mode = 0o644;
      try {
        mode = statSync(path).mode & 0o777;
      } catch {}
      mkdirSync(dirname(path), { recursive: true });
      writeFileAtomicSync(path, file.after ?? "", mode);
    } catch (error) {
      throw fileSystemError(error, file.path, "write") ?? error;
    }
  }
}
