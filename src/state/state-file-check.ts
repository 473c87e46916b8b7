import { readFileSync } from "node:fs";
import { StateError, withPath } from "../errors.js";

/**
 * The state folder may come from elsewhere (a state ref in CI, a copied checkout): a file of
 * it that is valid JSON but not what engram wrote is a state error naming the file and what
 * to do, never a crash deep in a cycle. Only what the readers rely on is checked.
 */

/** Runs `fn`, a read of the state file `path`: a failure names the file (a folder in its place fails with none). */
export function readingStateFile<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw withPath(error, path);
  }
}

/** A state file's text, its failure naming the file. */
export function readStateText(path: string): string {
  return readingStateFile(path, () => readFileSync(path, "utf8"));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function damaged(path: string, what: string, advice: string): StateError {
  return new StateError(`${path}: ${what}; the state folder was edited or damaged: ${advice}`);
}

/**
 * Why one journal line is not a buffered event (the field and what is wrong with it), or
 * undefined: the fields every reader of the buffer relies on, checked cheaply on open (the
 * whole schema is checked when the line is compacted, `storedEventProblem`).
 */
export function bufferedEventProblem(
  value: unknown,
): { field: string; reason: string } | undefined {
  if (!isObject(value)) return { field: "(the line)", reason: "not a JSON object" };
  const text = (field: string) => typeof value[field] === "string";
  const list = (field: string) => value[field] === undefined || Array.isArray(value[field]);
  if (!Number.isSafeInteger(value.seq)) return { field: "seq", reason: "not a sequence number" };
  for (const field of ["key", "received_at", "kind", "type"]) {
    if (!text(field)) return { field, reason: "not a string" };
  }
  const sender = value.sender;
  if (!isObject(sender)) return { field: "sender", reason: "not an object" };
  for (const field of ["id", "role"]) {
    if (typeof sender[field] !== "string")
      return { field: `sender.${field}`, reason: "not a string" };
  }
  for (const field of ["topics", "links"]) {
    if (!list(field)) return { field, reason: "not a list" };
  }
  return undefined;
}

const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");

/**
 * What is wrong with a buffer meta (or the part of one a cycle intent carries), or undefined:
 * each field present has the type its readers rely on (a sequence number that is a string
 * made the next journal line unreadable).
 */
export function bufferMetaProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not an object";
  for (const field of [
    "last_seq",
    "compacted_events",
    "recall_checked_seq",
    "focus_heartbeat_seq",
  ]) {
    if (value[field] !== undefined && !count(value[field])) return `${field} is not a count`;
  }
  for (const field of ["last_compaction_at", "last_received_at"]) {
    if (value[field] !== undefined && typeof value[field] !== "string")
      return `${field} is not a time`;
  }
  if (value.recall_counts !== undefined) {
    if (!isObject(value.recall_counts) || !Object.values(value.recall_counts).every(count)) {
      return "recall_counts is not a table of counts";
    }
  }
  if (value.focus_now !== undefined && !strings(value.focus_now))
    return "focus_now is not a list of lines";
  const batch = value.compacted_batch;
  if (
    batch !== undefined &&
    !(isObject(batch) && typeof batch.version === "string" && strings(batch.engrams))
  ) {
    return "compacted_batch is not a batch record";
  }
  return undefined;
}

const INTENT_ADVICE =
  "it is only a crashed cycle's plan: remove it to start afresh (the events it compacted are still in the buffer)";

/** The header and file lines of a cycle intent, as `finishCycle` reads them. */
export function assertIntent(header: unknown, writes: readonly unknown[], path: string): void {
  const bad = (what: string) => damaged(path, what, INTENT_ADVICE);
  if (!isObject(header)) throw bad("its header is not an object");
  if (!Number.isSafeInteger(header.through_seq) || (header.through_seq as number) < 0) {
    throw bad("through_seq is not a sequence number");
  }
  // Its shape only: where each path may point is `confineIntent`'s (`confinePath`) to say.
  if (!Array.isArray(header.deletes) || !header.deletes.every((d) => typeof d === "string")) {
    throw bad("deletes is not a list of paths");
  }
  const meta = bufferMetaProblem(header.meta);
  if (meta !== undefined) throw bad(`meta: ${meta}`);
  if (header.tree !== undefined && typeof header.tree !== "string") {
    throw bad("tree is not a folder name");
  }
  if (header.versions !== undefined && !Array.isArray(header.versions)) {
    throw bad("versions is not a list");
  }
  writes.forEach((w, i) => {
    if (!isObject(w) || typeof w.path !== "string" || typeof w.text !== "string") {
      throw bad(`line ${i + 2} is not a {path, text}`);
    }
  });
}
