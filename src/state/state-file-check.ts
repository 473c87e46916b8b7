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

const JOURNAL_ADVICE =
  "move the buffer folder aside (its events are then lost to this Director) and run again";

/** One line of the journal: an object with the fields every reader of the buffer uses. */
export function assertBufferedEvent(value: unknown, path: string, seq: unknown): void {
  const ok =
    isObject(value) &&
    typeof value.key === "string" &&
    Number.isSafeInteger(value.seq) &&
    typeof value.received_at === "string" &&
    typeof value.kind === "string" &&
    typeof value.type === "string" &&
    isObject(value.sender) &&
    typeof value.sender.id === "string" &&
    typeof value.sender.role === "string" &&
    (value.topics === undefined || Array.isArray(value.topics)) &&
    (value.links === undefined || Array.isArray(value.links));
  if (!ok) {
    const at = Number.isSafeInteger(seq) ? `the line of seq ${seq as number}` : "a line";
    throw damaged(path, `${at} is not a buffered event`, JOURNAL_ADVICE);
  }
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
