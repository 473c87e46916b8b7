/**
 * `ingest --from-git`'s read of what each commit's files say beyond their paths: the
 * dependency manifests (what was added and removed, core/history/dependencies.ts) and the CI
 * workflows, Dockerfiles, compose files, environment templates and `.npmrc` (which settings
 * changed, core/history/settings.ts). The blobs the log names, before and after, are fetched in
 * one `git cat-file --batch` and compared by the pure readers.
 */
import { type DependencyChange, dependencyChange } from "../core/history/dependencies.js";
import { type FileTexts, type SettingChange, settingChanges } from "../core/history/settings.js";
import { runGitChild } from "./git-child.js";
import { batchObjects } from "./rev-reads.js";

/** One file a commit changed whose text is read: its path and blob ids before and after (`0…` for none). */
export interface FileBlobs {
  path: string;
  before: string;
  after: string;
}

/** The files of one commit the import reads, by what it reads in them. */
export interface ReadFiles {
  manifests: readonly FileBlobs[];
  settings: readonly FileBlobs[];
}

/** What a commit's files say: the dependencies and the settings it changed, where any. */
export interface ContentChanges {
  dependencies?: DependencyChange;
  settings?: readonly SettingChange[];
}

/**
 * A commit that changed more files of one kind than this swept over packages or workflows (a
 * release, a mass edit): that kind is not read for it.
 */
export const MAX_FILES_PER_COMMIT = 8;
/** At most this many blobs in all, newest commits first: a bound on what one import reads. */
const MAX_BLOBS = 20_000;
/** A file larger than this is not read (no real manifest or workflow is; a planted one may be). */
export const MAX_READ_BYTES = 1 << 20;
/** At most this many bytes in all, newest commits first. */
export const MAX_READ_TOTAL_BYTES = 64 << 20;
const NO_BLOB = /^0+$/;

/** The files of a commit that are read: a kind over the per-commit bound is not. */
export function filesRead(files: ReadFiles): ReadFiles {
  const within = (kind: readonly FileBlobs[]) => (kind.length > MAX_FILES_PER_COMMIT ? [] : kind);
  return { manifests: within(files.manifests), settings: within(files.settings) };
}

const both = (files: ReadFiles) => [...files.manifests, ...files.settings];

/**
 * The texts of the files given, as the readers take them. `textOf` gives a blob's text, undefined
 * for none (the file did not exist on that side), null where it was not read (over its size
 * bound, or missing): such a file is left out, since read as absent every name in a manifest
 * would seem added or removed.
 */
export function readableTexts(
  files: readonly FileBlobs[],
  textOf: (id: string) => string | undefined | null,
): FileTexts[] {
  return files.flatMap((f) => {
    const before = textOf(f.before);
    const after = textOf(f.after);
    if (before === null || after === null) return [];
    return [
      {
        path: f.path,
        ...(before !== undefined ? { before } : {}),
        ...(after !== undefined ? { after } : {}),
      },
    ];
  });
}

/**
 * The content changes of each commit (by index) whose files are given, newest first within the
 * bounds; a commit not read, or whose files changed nothing read, is absent (all of them where
 * git could not run). Sizes are asked first (`--batch-check`), so that a planted giant blob is
 * never read.
 */
export async function readContentChanges(
  cwd: string,
  filesOf: readonly (ReadFiles | undefined)[],
): Promise<Map<number, ContentChanges>> {
  const reading = filesOf.map((files) => (files === undefined ? undefined : filesRead(files)));
  const candidates: number[] = [];
  const ids = new Set<string>();
  for (let i = reading.length - 1; i >= 0; i--) {
    const files = reading[i];
    if (files === undefined) continue;
    const wanted = blobIds(both(files));
    if (wanted.length === 0) continue;
    if (ids.size + wanted.length > MAX_BLOBS) break;
    for (const id of wanted) ids.add(id);
    candidates.push(i);
  }
  const out = new Map<number, ContentChanges>();
  if (ids.size === 0) return out;
  const sizes = await blobSizes(cwd, [...ids]);
  const fetch = new Set<string>();
  const chosen: number[] = [];
  let bytes = 0;
  for (const i of candidates) {
    const wanted = blobIds(both(reading[i] as ReadFiles)).filter(
      (id) => !fetch.has(id) && (sizes.get(id) ?? Number.POSITIVE_INFINITY) <= MAX_READ_BYTES,
    );
    const more = wanted.reduce((sum, id) => sum + (sizes.get(id) ?? 0), 0);
    if (bytes + more > MAX_READ_TOTAL_BYTES) break;
    bytes += more;
    for (const id of wanted) fetch.add(id);
    chosen.push(i);
  }
  const order = [...fetch];
  const objects = order.length > 0 ? await batchObjects(cwd, order) : [];
  if (objects === undefined) return out;
  const texts = new Map<string, string>();
  order.forEach((id, n) => {
    const object = objects[n];
    if (object?.type === "blob") texts.set(id, object.body.toString("utf8"));
  });
  const textOf = (id: string) => (NO_BLOB.test(id) ? undefined : (texts.get(id) ?? null));
  for (const i of chosen) {
    const files = reading[i] as ReadFiles;
    const dependencies = dependencyChange(readableTexts(files.manifests, textOf));
    const settings = settingChanges(readableTexts(files.settings, textOf));
    if (dependencies !== undefined || settings !== undefined) {
      out.set(i, {
        ...(dependencies !== undefined ? { dependencies } : {}),
        ...(settings !== undefined ? { settings } : {}),
      });
    }
  }
  return out;
}

function blobIds(files: readonly FileBlobs[]): string[] {
  return files
    .flatMap((f) => [f.before, f.after])
    .filter((id) => /^[0-9a-f]{40,64}$/.test(id) && !NO_BLOB.test(id));
}

/** Each blob's size (`git cat-file --batch-check`); a blob git does not have is absent. */
async function blobSizes(cwd: string, ids: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const answer = await runGitChild(cwd, ["cat-file", "--batch-check"], {
    input: `${ids.join("\n")}\n`,
  });
  if (answer.code !== 0) return sizes;
  for (const line of answer.stdout.toString("utf8").split("\n")) {
    const [id, type, size] = line.split(" ");
    if (id !== undefined && type === "blob" && size !== undefined) sizes.set(id, Number(size));
  }
  return sizes;
}
