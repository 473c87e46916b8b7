/**
 * `ingest --from-git`'s read of what each commit did to its dependencies: the manifests the
 * log names (by blob id, before and after), fetched in one `git cat-file --batch`, compared by
 * the pure reader (core/history/dependencies.ts).
 */
import { type DependencyChange, dependencyChange } from "../core/history/dependencies.js";
import { runGitChild } from "./git-child.js";
import { batchObjects } from "./rev-reads.js";

/** One manifest a commit changed: its path and its blob ids before and after (`0…` for none). */
export interface ManifestBlobs {
  path: string;
  before: string;
  after: string;
}

/** A commit that changed more manifests than this swept over packages (a release): not read. */
export const MAX_MANIFESTS_PER_COMMIT = 8;
/** At most this many blobs in all, newest commits first: a bound on what one import reads. */
const MAX_MANIFEST_BLOBS = 20_000;
/** A manifest larger than this is not read (no real one is; a planted one may be). */
export const MAX_MANIFEST_BYTES = 1 << 20;
/** At most this many bytes of manifests in all, newest commits first. */
export const MAX_MANIFEST_TOTAL_BYTES = 64 << 20;
const NO_BLOB = /^0+$/;

/**
 * The dependency change of each commit (by index) whose manifests are given, newest first
 * within the bounds; a commit not read, or whose dependencies did not change, is absent (all
 * of them where git could not run). Sizes are asked first (`--batch-check`), so that a
 * planted giant blob is never read.
 */
export async function readDependencyChanges(
  cwd: string,
  manifestsOf: readonly (readonly ManifestBlobs[] | undefined)[],
): Promise<Map<number, DependencyChange>> {
  const candidates: number[] = [];
  const ids = new Set<string>();
  for (let i = manifestsOf.length - 1; i >= 0; i--) {
    const manifests = manifestsOf[i];
    if (manifests === undefined || manifests.length > MAX_MANIFESTS_PER_COMMIT) continue;
    const wanted = blobIds(manifests);
    if (ids.size + wanted.length > MAX_MANIFEST_BLOBS) break;
    for (const id of wanted) ids.add(id);
    candidates.push(i);
  }
  const out = new Map<number, DependencyChange>();
  if (ids.size === 0) return out;
  const sizes = await blobSizes(cwd, [...ids]);
  const fetch = new Set<string>();
  const chosen: number[] = [];
  let bytes = 0;
  for (const i of candidates) {
    const wanted = blobIds(manifestsOf[i] ?? []).filter(
      (id) => !fetch.has(id) && (sizes.get(id) ?? Number.POSITIVE_INFINITY) <= MAX_MANIFEST_BYTES,
    );
    const more = wanted.reduce((sum, id) => sum + (sizes.get(id) ?? 0), 0);
    if (bytes + more > MAX_MANIFEST_TOTAL_BYTES) break;
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
  // A side that names a blob not read (missing, or too large) leaves its manifest out: read
  // as absent, every name in it would seem added or removed.
  const readable = (id: string) => NO_BLOB.test(id) || texts.has(id);
  for (const i of chosen) {
    const change = dependencyChange(
      (manifestsOf[i] ?? [])
        .filter((m) => readable(m.before) && readable(m.after))
        .map((m) => ({
          path: m.path,
          ...(texts.has(m.before) ? { before: texts.get(m.before) } : {}),
          ...(texts.has(m.after) ? { after: texts.get(m.after) } : {}),
        })),
    );
    if (change !== undefined) out.set(i, change);
  }
  return out;
}

function blobIds(manifests: readonly ManifestBlobs[]): string[] {
  return manifests
    .flatMap((m) => [m.before, m.after])
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
