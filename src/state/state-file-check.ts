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

function damaged(path: string, what: string, advice: string): StateError {
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
  if (!isObject(header.meta)) throw bad("meta is not an object");
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
