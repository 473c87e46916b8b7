import { parseVersionLog, VERSION_LOG_PATH, versionTag } from "../core/versions/log.js";
import { type GitRepo, readFileAt } from "../git/history.js";
import { snapshotTags, versionCommitsOn } from "../git/version-objects.js";
import { memoryFilesAt } from "../repo/memory-at.js";
import { type Snapshot, writeSnapshot } from "../repo/version-snapshots.js";

/**
 * Snapshot tags for the versions main holds that this clone has no tag for (a fresh CI
 * runner, a merge made elsewhere): each is rebuilt from the commit of main that brought the
 * version, when that commit holds exactly the version's memory. Snapshots are deterministic,
 * so the tag is the same commit the Director wrote when it made the version.
 */
export async function tagMergedVersions(
  repo: GitRepo,
  main: string,
): Promise<{ written: Snapshot[]; merged: string[] }> {
  const text = (await readFileAt(repo, main, VERSION_LOG_PATH))?.text;
  if (text === undefined) return { written: [], merged: [] };
  const records = parseVersionLog(text, `${main.slice(0, 12)}:${VERSION_LOG_PATH}`);
  const cwd = `${repo.dir}/${repo.prefix}`;
  const tags = await snapshotTags(cwd);
  const holds = (r: (typeof records)[number]) =>
    tags.get(r.version)?.catalog_hash === r.catalog_hash;
  const merged = records.filter(holds).map((r) => versionTag(r.version));
  const missing = records.filter((r) => !holds(r));
  if (missing.length === 0) return { written: [], merged };
  const carriers = await versionCommitsOn(cwd, main);
  const written: Snapshot[] = [];
  for (const record of missing) {
    const commit = carriers.get(record.version);
    if (commit === undefined) continue;
    const files = await memoryFilesAt(repo, commit);
    if (files.catalog.hash !== record.catalog_hash) continue;
    const snapshot = await writeSnapshot(repo, record, files.files);
    written.push(snapshot);
    merged.push(snapshot.tag);
  }
  return { written, merged };
}

/**
 * How the tags travel with a remote: the tags of merged versions are pushed (never forced;
 * main's history, and so their content, never changes). Tags of versions still only proposed
 * stay local: a proposal rebuilt on a newer main may renumber them. Best effort.
 */
export async function pushMergedTags(
  repoDir: string,
  remote: string,
  merged: readonly string[],
): Promise<string[]> {
  if (merged.length === 0) return [];
  const { remoteTagNames, pushTags } = await import("../git/remote.js");
  const there = await remoteTagNames(repoDir, remote, "refs/tags/engram/");
  const wanted = merged.filter((t) => !there.has(t));
  return (await pushTags(repoDir, remote, wanted)) ? wanted : [];
}
