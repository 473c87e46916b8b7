import type { RepoContext } from "../context/repo-context.js";
import type { VersionRecord } from "../core/versions/log.js";
import type { FileChanges } from "../core/versions/step.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import { gitRepoOf, type Snapshot, snapshotStep } from "../repo/version-snapshots.js";

/**
 * Called once for every version a session's consolidation makes, in order, with its version
 * line and every memory file the version changes (relative to the one before), before any of
 * the step's files are written to `tree` (the work tree, or the staging tree of `director run
 * --pr`): it writes the version's snapshot, a git commit under `refs/tags/engram/vN`. A crash
 * calls it again for the same version; a tag already holding the version's catalog is kept,
 * so the snapshots of a finished intent are never written twice. Null when `tree` is in no
 * git repository: the version is then only logged.
 */
export async function onVersion(
  ctx: RepoContext,
  record: VersionRecord,
  files: FileChanges,
  tree: string = ctx.repoDir,
): Promise<Snapshot | null> {
  const repo = await gitRepoOf(tree);
  if (repo === null) return null;
  return snapshotStep(repo, record, files, async () => (await readMemoryFiles(tree)).files);
}
