import type { RepoContext } from "../context/repo-context.js";
import {
  parseVersionLog,
  VERSION_LOG_PATH,
  type VersionRecord,
  versionTag,
} from "../core/versions/log.js";
import { commitOf, fileAt, snapshotTags, versionCommitsOn } from "../git/version-objects.js";
import { readConfinedText } from "../repo/confine.js";

/** One version as `director history` shows it. */
export interface HistoryEntry extends VersionRecord {
  /** The snapshot tag and its commit, when the tag exists and holds this version's memory. */
  tag: string | null;
  snapshot: string | null;
  /** The first-parent commit of main that brought the version onto main, when found. */
  commit: string | null;
}

export interface History {
  /** Where the log was read: the work tree, or a main ref holding a longer log. */
  source: string;
  main: string | null;
  versions: HistoryEntry[];
}

/** The main candidates, in order of preference when their logs are as long. */
const MAIN_REFS = ["main", "origin/main", "master", "origin/master"];

/**
 * Every logged version, newest first, from the longest version log among the work tree and
 * main (so it works in the embedded default, where the work tree holds memory no commit has
 * yet, and after PRs were merged, where main does). Reads git through `git` itself.
 */
export async function readHistory(
  ctx: RepoContext,
  options: { main?: string } = {},
): Promise<History> {
  const dir = ctx.repoDir;
  const candidates: { source: string; text: string; main: string | null }[] = [];
  const local = await readConfinedText(dir, VERSION_LOG_PATH);
  if (local !== undefined) candidates.push({ source: "work tree", text: local, main: null });
  let main: string | null = null;
  for (const ref of options.main !== undefined ? [options.main] : MAIN_REFS) {
    const commit = await commitOf(dir, ref);
    if (commit === undefined) continue;
    main ??= ref;
    const text = await fileAt(dir, commit, VERSION_LOG_PATH);
    if (text !== undefined) candidates.push({ source: ref, text, main: ref });
  }
  let best: { source: string; records: VersionRecord[] } = { source: "none", records: [] };
  for (const c of candidates) {
    const records = parseVersionLog(c.text, `${c.source}:${VERSION_LOG_PATH}`);
    if ((records.at(-1)?.version ?? 0) > (best.records.at(-1)?.version ?? 0)) {
      best = { source: c.source, records };
    }
  }
  const tags = await snapshotTags(dir);
  const carried = main !== null ? await versionCommitsOn(dir, main) : new Map<number, string>();
  const versions = best.records
    .map((r): HistoryEntry => {
      const tag = tags.get(r.version);
      const holds = tag !== undefined && tag.catalog_hash === r.catalog_hash;
      return {
        ...r,
        tag: holds ? versionTag(r.version).replace(/^refs\/tags\//, "") : null,
        snapshot: holds ? tag.commit : null,
        commit: carried.get(r.version) ?? null,
      };
    })
    .reverse();
  return { source: best.source, main, versions };
}
