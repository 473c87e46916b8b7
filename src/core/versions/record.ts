import type { Catalog } from "../../schema/engram.js";
import {
  appendVersion,
  parseVersionLog,
  renderVersionLog,
  VERSION_LOG_PATH,
  type VersionCounts,
  type VersionMaker,
  type VersionRecord,
} from "./log.js";

export { CORE_DIR, STATE_DIR } from "./documents.js";

const DOCUMENT_PATH = /^memory\/(state|core)\/[^/]+\.json$/;

/** Which document folder a path is in, if it is a state or core document. */
export function documentKind(path: string): "state" | "core" | undefined {
  const m = DOCUMENT_PATH.exec(path);
  return m ? (m[1] as "state" | "core") : undefined;
}

/**
 * The counts of a version a cycle, restore or rollback makes: engrams from the catalog, state
 * and core from the documents present; episodes and facts are what sessions consolidated, which
 * these steps do not change, so they carry over from the version before.
 */
export function countsOf(
  catalog: Catalog,
  paths: Iterable<string>,
  previous: VersionCounts | undefined,
): VersionCounts {
  let state = 0;
  let core = 0;
  for (const path of paths) {
    const kind = documentKind(path);
    if (kind === "state") state++;
    else if (kind === "core") core++;
  }
  return {
    engrams: catalog.entries.length,
    episodes: previous?.episodes ?? 0,
    facts: previous?.facts ?? 0,
    state,
    core,
  };
}

/** The record of a new catalog version: its time is the catalog's own (from the input). */
export function recordFor(
  catalog: Catalog,
  madeBy: VersionMaker,
  counts: VersionCounts,
): VersionRecord {
  return {
    version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    created_at: catalog.created_at,
    made_by: madeBy,
    counts,
  };
}

/**
 * The log text with `record` appended. A last line of the same version is replaced: it is a
 * step finished again after a crash (the same line), or a proposed version rebuilt on a newer
 * main before it merged (the line now describes what that version holds).
 */
export function logWith(text: string | undefined, record: VersionRecord): string {
  const records = parseVersionLog(text ?? "", VERSION_LOG_PATH);
  const kept = records.at(-1)?.version === record.version ? records.slice(0, -1) : records;
  return renderVersionLog(appendVersion(kept, record));
}

/** The log's last record, or undefined for an absent or empty log. */
export function lastRecord(text: string | undefined): VersionRecord | undefined {
  return parseVersionLog(text ?? "", VERSION_LOG_PATH).at(-1);
}

/** What made a version, in words: `cycle`, `session s_...`, `rollback to v3`, `restore`. */
export function makerText(made: VersionMaker): string {
  if (made.kind === "session") return `session ${made.session_id}`;
  if (made.kind === "rollback") return `rollback to v${made.target}`;
  if (made.kind === "set-aside") return `set-aside ${made.path}`;
  return made.kind;
}
