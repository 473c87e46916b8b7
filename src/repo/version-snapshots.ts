import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import {
  parseVersionLog,
  VERSION_LOG_PATH,
  type VersionRecord,
  versionTag,
} from "../core/versions/log.js";
import {
  CORE_DIR,
  documentKind,
  lastRecord,
  makerText,
  STATE_DIR,
} from "../core/versions/record.js";
import { StateError } from "../errors.js";
import { type GitRepo, openRepo, readCommit, readFileAt, readFilesUnder } from "../git/history.js";
import {
  batchedObjects,
  writeCommitFast,
  writeTextBlobFast,
  writeTextTreeFast,
} from "../git/object-ids.js";
import { type Graft, graftTree } from "../git/objects.js";
import { readPlainRef, writePlainRef } from "../git/refs.js";
import { Catalog } from "../schema/engram.js";
import { readConfinedText } from "./confine.js";
import { documentPaths } from "./memory-files.js";
import { readCatalog } from "./memory-tree.js";

const AUTHOR = { name: "engram director", email: "director@engram.invalid" };

/** A version's files: repository-relative paths (memory/..., MEMORY.md) to text. */
export type VersionFiles = ReadonlyMap<string, string>;

export interface Snapshot {
  version: number;
  tag: string;
  commit: string;
}

/** Snapshot trees hold memory/ and MEMORY.md at their root, wherever the engram repo sits. */
function rootOf(repo: GitRepo): GitRepo {
  return { ...repo, prefix: "" };
}

function snapshotPaths(files: VersionFiles): { path: string; text: string }[] {
  return [...files]
    .filter(([path]) => path === FOCUS_PATH || path.startsWith(`${MEMORY_DIR}/`))
    .map(([path, text]) => ({ path, text }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The snapshot commit a tag names, or undefined when the tag does not exist. */
export async function snapshotCommit(repo: GitRepo, version: number): Promise<string | undefined> {
  return readPlainRef(repo.gitdir, versionTag(version));
}

/**
 * Writes the snapshot of one version and points its tag at it. Writing the same version with
 * the same files again changes nothing. A tag naming other content is moved: that version was
 * proposed and replaced before it reached main (main's history is never rewritten).
 */
export async function writeSnapshot(
  repo: GitRepo,
  record: VersionRecord,
  files: VersionFiles,
): Promise<Snapshot> {
  // One pack for a whole memory's objects (a first snapshot holds every engram): a loose
  // file each cost more than compacting the events they were made of. Tags move after.
  const pending: Snapshot[] = [];
  const { version, tag, commit } = await batchedObjects(repo, () =>
    writeWhole(repo, record, files, pending),
  );
  for (const snapshot of pending) pointTag(repo, snapshot);
  return { version, tag, commit };
}

async function writeWhole(
  repo: GitRepo,
  record: VersionRecord,
  files: VersionFiles,
  pending?: Snapshot[],
) {
  const tree = writeTextTreeFast(repo, snapshotPaths(files));
  // The version logged before this one in the version's own log, if any.
  const before = recordBefore(files.get(VERSION_LOG_PATH) ?? "", record.version)?.version;
  const parent = before === undefined ? undefined : await snapshotCommit(repo, before);
  const written = await commitSnapshot(repo, record, tree, parent, pending);
  return { ...written, catalog_hash: record.catalog_hash, tree };
}

/**
 * The snapshot commit of `tree`, and the version's tag moved to it when it names another; or,
 * given `pending`, the tag to move once the commit's objects are written (`batchedObjects`).
 */
async function commitSnapshot(
  repo: GitRepo,
  record: VersionRecord,
  tree: string,
  parent: string | undefined,
  pending?: Snapshot[],
): Promise<Snapshot> {
  const commit = writeCommitFast(repo, {
    tree,
    parents: parent === undefined ? [] : [parent],
    message: [
      `engram memory v${record.version}`,
      "",
      `Engram-Version: ${record.version}`,
      `Engram-Catalog: ${record.catalog_hash}`,
      `Engram-Made-By: ${makerText(record.made_by)}`,
    ].join("\n"),
    author: { ...AUTHOR, timestamp: Math.floor(Date.parse(record.created_at) / 1000) },
  });
  const snapshot = { version: record.version, tag: versionTag(record.version), commit };
  if (pending !== undefined) pending.push(snapshot);
  else pointTag(repo, snapshot);
  return snapshot;
}

function pointTag(repo: GitRepo, { tag, commit }: Snapshot): void {
  if (readPlainRef(repo.gitdir, tag) !== commit) writePlainRef(repo.gitdir, tag, commit);
}

/**
 * The one call that records a version in git, for every writer of versions (a cycle, a
 * restore, a rollback, a session's consolidation): the snapshot of `files` under the tag of
 * `record.version`. Null when `repoDir` is in no git repository: versions are then only logged.
 */
export async function recordVersion(
  repo: GitRepo | string,
  record: VersionRecord,
  files: VersionFiles,
): Promise<Snapshot | null> {
  const opened = typeof repo === "string" ? await gitRepoOf(repo) : repo;
  return opened === null ? null : writeSnapshot(opened, record, files);
}

/** The git repository holding `dir`, or null when there is none (versions are then only logged). */
export async function gitRepoOf(dir: string): Promise<GitRepo | null> {
  try {
    return await openRepo(dir);
  } catch (error) {
    if (error instanceof StateError) return null;
    throw error;
  }
}

/** The catalog of a commit's snapshot-shaped tree (memory/ at its root). */
export async function catalogOfSnapshot(repo: GitRepo, commit: string): Promise<Catalog> {
  const text = (await readFileAt(rootOf(repo), commit, CATALOG_PATH))?.text;
  if (text === undefined) throw new StateError(`${commit.slice(0, 12)}: no ${CATALOG_PATH}`);
  const parsed = Catalog.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new StateError(`${CATALOG_PATH} at ${commit.slice(0, 12)}: not a valid catalog`);
  }
  return parsed.data as Catalog;
}

/**
 * The files of a version read back from its snapshot; undefined when there is no tag, or when
 * the tag names other memory than `catalogHash` (a version replaced before it merged).
 */
export async function readSnapshot(
  repo: GitRepo,
  version: number,
  catalogHash?: string,
): Promise<{ commit: string; files: Map<string, string> } | undefined> {
  const commit = await snapshotCommit(repo, version);
  if (commit === undefined) return undefined;
  const root = rootOf(repo);
  if (catalogHash !== undefined && (await catalogOfSnapshot(repo, commit)).hash !== catalogHash) {
    return undefined;
  }
  const files = new Map<string, string>();
  for (const file of await readFilesUnder(root, commit, MEMORY_DIR))
    files.set(file.path, file.text);
  const focus = await readFileAt(root, commit, FOCUS_PATH);
  if (focus) files.set(FOCUS_PATH, focus.text);
  return { commit, files };
}

/**
 * The snapshot of the version a step is about to write, from the previous version's snapshot
 * with only the step's changes grafted on: the cost follows the change, not the size of
 * memory. Only when the tree in `dir` still holds the previous logged version and its tag holds
 * that version; otherwise undefined (the caller writes the snapshot from all the files). The
 * state and core folders are taken whole from the tree, as they will be after the step.
 */
export async function snapshotFromPrevious(
  repo: GitRepo,
  dir: string,
  record: VersionRecord,
  change: { writes: readonly { path: string; text: string }[]; deletes: readonly string[] },
  /** The hash of the catalog the tree holds now, when the caller has read it already. */
  treeCatalogHash?: string,
): Promise<Snapshot | undefined> {
  const previous = lastRecord(await readConfinedText(dir, VERSION_LOG_PATH));
  if (previous === undefined || previous.version >= record.version) return undefined;
  const holds = treeCatalogHash ?? (await readCatalog(dir)).hash;
  if (holds !== previous.catalog_hash) return undefined;
  const parent = await snapshotCommit(repo, previous.version);
  const parentTree = parent && (await treeHolding(repo, parent, previous.catalog_hash));
  if (parent === undefined || !parentTree) return undefined;
  const grafts = new Map<string, Graft>();
  const documents = new Map<string, string>();
  for (const path of documentPaths(dir)) {
    documents.set(path, (await readConfinedText(dir, path, "document")) ?? "");
  }
  for (const path of change.deletes) {
    if (documentKind(path) !== undefined) documents.delete(path);
    else grafts.set(path, null);
  }
  for (const { path, text } of change.writes) {
    if (documentKind(path) !== undefined) documents.set(path, text);
    else grafts.set(path, { type: "blob", oid: writeTextBlobFast(repo, text) });
  }
  for (const folder of [STATE_DIR, CORE_DIR]) {
    const inside = [...documents]
      .filter(([path]) => path.startsWith(`${folder}/`))
      .map(([path, text]) => ({ path: path.slice(folder.length + 1), text }));
    grafts.set(
      folder,
      inside.length === 0 ? null : { type: "tree", oid: writeTextTreeFast(repo, inside) },
    );
  }
  const tree = await graftTree(repo, parentTree, grafts);
  return commitSnapshot(repo, record, tree, parent);
}

/** The tree of snapshot commit `commit` when it holds memory whose catalog hash is `catalogHash`. */
async function treeHolding(
  repo: GitRepo,
  commit: string,
  catalogHash: string,
): Promise<string | undefined> {
  const { commit: object } = await readCommit(repo, commit);
  return object.message.includes(`\nEngram-Catalog: ${catalogHash}\n`) ? object.tree : undefined;
}

/** A snapshot as the next version's step needs it: the parent commit and the tree it grafts on. */
interface Written extends Snapshot {
  catalog_hash: string;
  tree: string;
}

/** One version step's record and every memory file it changes. */
export interface SnapshotStep {
  record: VersionRecord;
  files: { writes: readonly { path: string; text: string }[]; deletes: readonly string[] };
}

/**
 * The snapshots of versions made one after the other (a cycle's sessions' consolidations), in
 * order: each is the previous one's tree with its step's changes grafted on (see `stepOnto`).
 * Within the run, the previous snapshot is taken from memory, so a version costs its own
 * changes only: no ref or commit is read back. The objects of all the versions are written
 * together (one pack), and only then their tags.
 */
export async function snapshotSteps(
  repo: GitRepo,
  steps: readonly SnapshotStep[],
  base: () => Promise<Map<string, string>>,
): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  const pending: Snapshot[] = [];
  await batchedObjects(repo, async () => {
    let before: Written | undefined;
    for (const step of steps) {
      before = await stepOnto(repo, step.record, step.files, base, before, pending);
      out.push({ version: before.version, tag: before.tag, commit: before.commit });
    }
  });
  for (const snapshot of pending) pointTag(repo, snapshot);
  return out;
}

/**
 * The snapshot of a version one step makes from the version before (a session's
 * consolidation): the step's changes grafted on the previous version's snapshot, or, when that
 * has none, the whole of `base()` (memory before the step) with the changes laid over. A tag
 * that already holds this version's catalog is kept: the step is being finished again.
 */
async function stepOnto(
  repo: GitRepo,
  record: VersionRecord,
  change: SnapshotStep["files"],
  base: () => Promise<Map<string, string>>,
  /** The snapshot this run wrote last, when it is of the version before. */
  before: Written | undefined,
  pending: Snapshot[],
): Promise<Written> {
  const tag = versionTag(record.version);
  const existing = await snapshotCommit(repo, record.version);
  const kept = existing && (await treeHolding(repo, existing, record.catalog_hash));
  if (kept) return { ...identity(record), tag, commit: existing, tree: kept };
  const log = change.writes.find((w) => w.path === VERSION_LOG_PATH)?.text;
  const previous = recordBefore(log ?? "", record.version);
  const parent =
    previous !== undefined &&
    before?.version === previous.version &&
    before.catalog_hash === previous.catalog_hash
      ? before
      : await loggedSnapshot(repo, previous);
  if (parent !== undefined) {
    const inSnapshot = (path: string) => path === FOCUS_PATH || path.startsWith(`${MEMORY_DIR}/`);
    const grafts = new Map<string, Graft>();
    for (const path of change.deletes) if (inSnapshot(path)) grafts.set(path, null);
    for (const { path, text } of change.writes) {
      // By path: the files every version rewrites (the catalog) are packed as deltas.
      if (inSnapshot(path)) {
        grafts.set(path, { type: "blob", oid: writeTextBlobFast(repo, text, path) });
      }
    }
    const tree = await graftTree(repo, parent.tree, grafts);
    const written = await commitSnapshot(repo, record, tree, parent.commit, pending);
    return { ...written, catalog_hash: record.catalog_hash, tree };
  }
  const files = await base();
  for (const path of change.deletes) files.delete(path);
  for (const { path, text } of change.writes) files.set(path, text);
  return writeWhole(repo, record, files, pending);
}

function identity(record: VersionRecord) {
  return { version: record.version, catalog_hash: record.catalog_hash };
}

/** The snapshot a logged version's tag names, when it holds that version's memory. */
async function loggedSnapshot(
  repo: GitRepo,
  record: VersionRecord | undefined,
): Promise<Written | undefined> {
  if (record === undefined) return undefined;
  const commit = await snapshotCommit(repo, record.version);
  const tree = commit && (await treeHolding(repo, commit, record.catalog_hash));
  if (commit === undefined || !tree) return undefined;
  return { ...identity(record), tag: versionTag(record.version), commit, tree };
}

/** The last version a log records below `version`, read from the log's end. */
function recordBefore(log: string, version: number): VersionRecord | undefined {
  let end = log.length;
  while (end > 0) {
    const start = log.lastIndexOf("\n", end - 2) + 1;
    const line = log.slice(start, end);
    end = start;
    if (line.trim() === "") continue;
    const record = parseVersionLog(line)[0];
    if (record !== undefined && record.version < version) return record;
  }
  return undefined;
}
