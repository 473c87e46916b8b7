import type { RepoContext } from "../context/repo-context.js";
import type { VersionCounts, VersionMaker, VersionRecord } from "../core/versions/log.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { countsOf, lastRecord, logWith, recordFor } from "../core/versions/record.js";
import { readConfinedText } from "../repo/confine.js";
import { documentPaths, readMemoryFiles } from "../repo/memory-files.js";
import type { Snapshot } from "../repo/version-snapshots.js";
import type { Catalog } from "../schema/engram.js";
import type { EventBuffer } from "../state/buffer.js";
import { commitCycle } from "./cycle-intent.js";

/** A new version about to be written: its log line, and the log file to write with the catalog. */
export interface NextVersion {
  record: VersionRecord;
  write: { path: string; text: string };
}

/**
 * The version log of the memory tree in `dir` with the line of `catalog`, the new version a
 * cycle, restore or rollback is about to write; the caller writes it in the same crash-safe
 * step as the catalog. `documents` are the state and core documents the version will hold
 * (by default, those in the tree now).
 */
export async function nextVersion(
  dir: string,
  catalog: Catalog,
  madeBy: VersionMaker,
  documents: readonly string[] = documentPaths(dir),
  /** Whose episodes and facts the version holds (default: the last logged version's). */
  carried?: VersionCounts,
): Promise<NextVersion> {
  const text = await readConfinedText(dir, VERSION_LOG_PATH);
  const counts = countsOf(catalog, documents, carried ?? lastRecord(text)?.counts);
  const record = recordFor(catalog, madeBy, counts);
  return { record, write: { path: VERSION_LOG_PATH, text: logWith(text, record) } };
}

/**
 * Writes the snapshot of the version the tree in `dir` is about to hold: its files now, with
 * the step's writes and deletes laid over them. Called before the step's files are written:
 * a crash in between leaves a tag ahead of the tree, which the step, finished or made again,
 * moves to what it writes. Null when `gitDir` is in no git repository.
 */
export async function snapshotNext(
  gitDir: string,
  dir: string,
  record: VersionRecord,
  change: { writes: readonly { path: string; text: string }[]; deletes: readonly string[] },
  /** The hash of the catalog the tree holds before the step, when already read. */
  treeCatalogHash?: string,
): Promise<Snapshot | null> {
  const { gitRepoOf, recordVersion, snapshotFromPrevious } = await import(
    "../repo/version-snapshots.js"
  );
  const repo = await gitRepoOf(gitDir);
  if (repo === null) return null;
  const quick = await snapshotFromPrevious(repo, dir, record, change, treeCatalogHash);
  if (quick !== undefined) return quick;
  const { files } = await readMemoryFiles(dir);
  for (const path of change.deletes) files.delete(path);
  for (const { path, text } of change.writes) files.set(path, text);
  return recordVersion(repo, record, files);
}

/**
 * One version step outside a cycle (a restore, a rollback): its files, the catalog and the
 * version log written together through the cycle's crash-safe intent (finished whole by the
 * next Director after a crash), after the version's snapshot. The buffer is left as it is.
 */
export async function commitVersion(
  ctx: RepoContext,
  buffer: EventBuffer,
  step: {
    catalog: Catalog;
    madeBy: VersionMaker;
    writes: readonly { path: string; text: string }[];
    deletes: readonly string[];
    documents?: readonly string[];
    /** A rollback holds its target's episodes and facts, not the last version's. */
    carried?: VersionCounts;
    /** The repository the snapshot goes to (default: the memory tree's own). */
    gitDir?: string;
  },
): Promise<{ record: VersionRecord; snapshot: Snapshot | null }> {
  const version = await nextVersion(
    ctx.repoDir,
    step.catalog,
    step.madeBy,
    step.documents,
    step.carried,
  );
  const writes = [...step.writes, version.write];
  const snapshot = await snapshotNext(step.gitDir ?? ctx.repoDir, ctx.repoDir, version.record, {
    writes,
    deletes: step.deletes,
  });
  await commitCycle(ctx, buffer, {
    through_seq: 0,
    writes,
    deletes: [...step.deletes],
    meta: {},
  });
  return { record: version.record, snapshot };
}
