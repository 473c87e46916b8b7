import { CATALOG_PATH } from "../core/model/paths.js";
import type { VersionRecord } from "../core/versions/log.js";
import { StateError } from "../errors.js";
import { memoryFilesOf } from "../git/version-objects.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import type { History } from "./history.js";

/** A version's memory files and where they were read from. */
export interface VersionContent {
  record: VersionRecord;
  files: Map<string, string>;
  /** `snapshot` (its tag), `main` (the commit that brought it), or the `work tree`. */
  from: "snapshot" | "main" | "work tree";
  commit: string | null;
}

function catalogHashOf(files: ReadonlyMap<string, string>): string | undefined {
  try {
    return (JSON.parse(files.get(CATALOG_PATH) ?? "") as { hash?: string }).hash;
  } catch {
    return undefined;
  }
}

/**
 * The files of one logged version: from its snapshot tag, else from the commit of main that
 * brought it, else from the work tree when it holds that version now. An unknown version, or
 * one whose memory no longer exists anywhere, is an error naming what is known.
 */
export async function filesOfVersion(
  repoDir: string,
  history: History,
  version: number,
): Promise<VersionContent> {
  const entry = history.versions.find((v) => v.version === version);
  if (entry === undefined) {
    const known = history.versions.map((v) => v.version);
    const range =
      known.length === 0
        ? "no version is logged yet (memory/versions.ndjson is absent or empty)"
        : `logged versions: ${Math.min(...known)} to ${Math.max(...known)}`;
    throw new StateError(`version ${version}: unknown; ${range}`);
  }
  const { tag: _t, snapshot, commit, ...record } = entry;
  if (snapshot !== null) {
    const files = await memoryFilesOf(repoDir, snapshot, true);
    if (catalogHashOf(files) === record.catalog_hash) {
      return { record, files, from: "snapshot", commit: snapshot };
    }
  }
  if (commit !== null) {
    const files = await memoryFilesOf(repoDir, commit, false);
    if (catalogHashOf(files) === record.catalog_hash)
      return { record, files, from: "main", commit };
  }
  const local = await readMemoryFiles(repoDir);
  if (local.catalog.hash === record.catalog_hash) {
    return { record, files: local.files, from: "work tree", commit: null };
  }
  throw new StateError(
    `version ${version}: no snapshot tag engram/v${version} holds it and no commit of main does; its memory cannot be read`,
  );
}
