import type { RepoContext } from "../context/repo-context.js";
import { confinePath } from "../core/model/paths.js";
import type { VersionRecord } from "../core/versions/log.js";
import type { FileChanges } from "../core/versions/step.js";
import { StateError } from "../errors.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import { gitRepoOf, type Snapshot, snapshotSteps } from "../repo/version-snapshots.js";

/**
 * Called with the versions a cycle's sessions' consolidations make, oldest first, each with
 * its version line and every memory file it changes (relative to the one before), before any
 * of their files are written to `tree` (the work tree, or the staging tree of `director run
 * --pr`): it writes each version's snapshot, a git commit under `refs/tags/engram/vN`. A crash
 * calls it again for the same versions; a tag already holding the version's catalog is kept,
 * so the snapshots of a finished step are never written twice. Empty when `tree` is in no git
 * repository: the versions are then only logged.
 */
export async function onVersions(
  ctx: RepoContext,
  versions: readonly { record: VersionRecord; files: FileChanges }[],
  tree: string = ctx.repoDir,
): Promise<Snapshot[]> {
  // A version's files become paths of a snapshot's tree: each one confined first.
  for (const { record, files } of versions) {
    for (const path of [...files.writes.map((w) => w.path), ...files.deletes]) {
      const problem = confinePath(path, "memory");
      if (problem !== undefined) {
        throw new StateError(
          `version ${record.version}: ${JSON.stringify(path)} ${problem}: refused, no snapshot was written`,
        );
      }
    }
  }
  const repo = await gitRepoOf(tree);
  if (repo === null || versions.length === 0) return [];
  return snapshotSteps(repo, versions, async () => (await readMemoryFiles(tree)).files);
}
