import type { RepoContext } from "../context/repo-context.js";
import type { VersionRecord } from "../core/versions/log.js";
import type { FileChanges } from "../core/versions/step.js";

/**
 * Called once for every version a session's consolidation makes, with its version line and
 * every memory file the version changes (relative to the one before), after the files are in
 * place and before the step's intent is removed: a crash in between calls it again for the
 * same version, so what it does must be idempotent. This is where version snapshots (a git
 * commit per version under `refs/tags/engram/vN`) are written; until they are, it does
 * nothing.
 */
export async function onVersion(
  _ctx: RepoContext,
  _record: VersionRecord,
  _files: FileChanges,
): Promise<void> {}
