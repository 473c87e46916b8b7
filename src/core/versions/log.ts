import { StateError } from "../errors.js";
import { canonicalJson } from "../model/canonical.js";
import { MEMORY_DIR } from "../model/paths.js";

/**
 * The version log: one line per version of durable memory, oldest first, kept in memory/ so
 * it is reviewed with the change that makes it and survives restarts and merged PRs.
 */
export const VERSION_LOG_PATH = `${MEMORY_DIR}/versions.ndjson`;

/**
 * What made a version: a Director cycle, one session's consolidation, a rollback, a restore,
 * or one memory file set aside (`director set-aside`, with the file's path).
 */
export type VersionMaker =
  | { kind: "cycle" }
  | { kind: "session"; session_id: string }
  | { kind: "rollback"; target: number }
  | { kind: "restore" }
  | { kind: "set-aside"; path: string };

export interface VersionCounts {
  engrams: number;
  episodes: number;
  facts: number;
  state: number;
  core: number;
}

export interface VersionRecord {
  version: number;
  /** The catalog hash of memory at this version. */
  catalog_hash: string;
  /** From the input (the newest receipt stamp) or SOURCE_DATE_EPOCH, never the wall clock. */
  created_at: string;
  made_by: VersionMaker;
  counts: VersionCounts;
}

const MAKER_KINDS = new Set(["cycle", "session", "rollback", "restore", "set-aside"]);
const COUNT_KEYS: readonly (keyof VersionCounts)[] = [
  "engrams",
  "episodes",
  "facts",
  "state",
  "core",
];

function bad(path: string, line: number, field: string, why: string): StateError {
  return new StateError(`${path}:${line}: ${field}: ${why}`);
}

function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n >= 0;
}

function parseMaker(raw: unknown, path: string, line: number): VersionMaker {
  const m = raw as Record<string, unknown> | null;
  if (typeof m !== "object" || m === null || !MAKER_KINDS.has(m.kind as string)) {
    throw bad(
      path,
      line,
      "made_by.kind",
      "expected cycle, session, rollback, restore or set-aside",
    );
  }
  if (m.kind === "session") {
    if (typeof m.session_id !== "string" || m.session_id === "") {
      throw bad(path, line, "made_by.session_id", "expected the session id");
    }
    return { kind: "session", session_id: m.session_id };
  }
  if (m.kind === "rollback") {
    if (!isCount(m.target)) throw bad(path, line, "made_by.target", "expected a version");
    return { kind: "rollback", target: m.target };
  }
  if (m.kind === "set-aside") {
    if (typeof m.path !== "string" || m.path === "") {
      throw bad(path, line, "made_by.path", "expected the path of the file set aside");
    }
    return { kind: "set-aside", path: m.path };
  }
  return { kind: m.kind as "cycle" | "restore" };
}

function parseRecord(raw: unknown, path: string, line: number): VersionRecord {
  const r = raw as Record<string, unknown> | null;
  if (typeof r !== "object" || r === null || Array.isArray(r)) {
    throw bad(path, line, "(line)", "expected a JSON object");
  }
  if (!isCount(r.version) || r.version < 1) throw bad(path, line, "version", "expected >= 1");
  if (typeof r.catalog_hash !== "string" || !r.catalog_hash.startsWith("sha256:")) {
    throw bad(path, line, "catalog_hash", "expected sha256:<hex>");
  }
  if (typeof r.created_at !== "string") throw bad(path, line, "created_at", "expected a time");
  const c = r.counts as Record<string, unknown> | null;
  if (typeof c !== "object" || c === null) throw bad(path, line, "counts", "expected an object");
  const counts = {} as VersionCounts;
  for (const key of COUNT_KEYS) {
    const n = c[key];
    if (!isCount(n)) throw bad(path, line, `counts.${key}`, "expected a count");
    counts[key] = n;
  }
  return {
    version: r.version,
    catalog_hash: r.catalog_hash,
    created_at: r.created_at,
    made_by: parseMaker(r.made_by, path, line),
    counts,
  };
}

/**
 * Reads the log; every line must name a higher version than the one before it. Versions
 * follow one another by one, except where a proposal was rebuilt on a newer main before it
 * merged: the versions it had proposed never reached main, so the rebuilt one leaves a gap.
 */
export function parseVersionLog(text: string, path = VERSION_LOG_PATH): VersionRecord[] {
  const records: VersionRecord[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw bad(path, i + 1, "(line)", "not JSON");
    }
    const record = parseRecord(raw, path, i + 1);
    const previous = records.at(-1);
    if (previous !== undefined && record.version <= previous.version) {
      throw bad(path, i + 1, "version", `expected more than ${previous.version}`);
    }
    records.push(record);
  }
  return records;
}

/** One canonical line per version, so the same history is the same bytes. */
export function renderVersionLog(records: readonly VersionRecord[]): string {
  return records.map((r) => `${canonicalJson(r)}\n`).join("");
}

/**
 * The log with one more version. The version is the catalog's new `catalog_version`, which
 * must be above the last logged one; a log may begin at any version (memory older than the
 * log has no lines).
 */
export function appendVersion(
  records: readonly VersionRecord[],
  next: VersionRecord,
): VersionRecord[] {
  const last = records.at(-1);
  if (last !== undefined && next.version <= last.version) {
    throw new StateError(
      `${VERSION_LOG_PATH}: version ${next.version} cannot follow ${last.version}`,
    );
  }
  return [...records, next];
}

/** The git ref that names a version's snapshot commit (a lightweight tag). */
export function versionTag(version: number): string {
  return `refs/tags/engram/v${version}`;
}
