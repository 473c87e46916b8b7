/**
 * Journal lines set aside when the buffer is opened (issue 40): a whole line that is JSON but
 * not a buffered event comes from a state folder edited or restored from a branch, never from
 * ingest. It is moved to `buffer/set-aside/journal.N.ndjson` (as a refused cycle intent is)
 * and the journal rewritten without it, atomically; every other line stays, byte for byte.
 * A line that is not JSON is held (`HeldLines`) until a later line shows it stands inside the
 * journal, and is then set aside too; a torn tail, with nothing after it but more of the
 * same, was never acknowledged and is cut off (`buffer.ts`).
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { StateError } from "../errors.js";
import {
  fsyncDirSync,
  STATE_DIR_MODE,
  STATE_FILE_MODE,
  tempName,
  writeFileAtomicSync,
} from "./atomic.js";
import { CHUNK_BYTES } from "./journal-lines.js";

/** What a line that does not parse is found to be. */
export const NOT_JSON = { field: "(the line)", reason: "not JSON", seq: null } as const;

/**
 * Lines that do not parse, held while the journal is read: followed by a line, they are junk
 * inside it (set aside); followed by nothing, they are a crash's torn tail (cut off). A torn
 * write is always the last, since every open cuts the tail before anything is appended.
 */
export class HeldLines {
  private held: InvalidJournalLine[] = [];

  hold(line: InvalidJournalLine): void {
    this.held.push(line);
  }

  /** What was held, now known to stand before a later line. */
  release(): InvalidJournalLine[] {
    const released = this.held;
    this.held = [];
    return released;
  }
}

/** A journal line found to be no buffered event, where it was and what is wrong with it. */
export interface InvalidJournalLine {
  /** Its line number in the journal, from 1. */
  line: number;
  /** Its `seq` when it has one that is a sequence number. */
  seq: number | null;
  field: string;
  reason: string;
  /** Where its bytes start in the journal, and how many (its newline included). */
  offset: number;
  bytes: number;
  text: string;
}

/** What the run reports of a line set aside. */
export interface SetAsideLine {
  /** The journal it was read from. */
  file: string;
  line: number;
  seq: number | null;
  field: string;
  reason: string;
  /** The file it was moved to; null when the buffer was opened read-only (left in place). */
  moved_to: string | null;
}

/** The folder of the buffer where refused state files go (a cycle intent's too). */
export function setAsideFolder(journal: string): string {
  const folder = join(dirname(journal), "set-aside");
  try {
    mkdirSync(folder, { mode: STATE_DIR_MODE });
  } catch (error) {
    // Only a real folder of our own: a link here would carry the lines elsewhere.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !lstatSync(folder).isDirectory()) {
      throw new StateError(`${folder}: not a folder: move it aside and run again`);
    }
  }
  return folder;
}

/**
 * Writes `invalid` to a new `set-aside/journal.N.ndjson` (durable first), then rewrites the
 * journal's first `end` bytes without their lines (temp, fsync, rename). A crash in between
 * leaves the lines in both places: the next open sets them aside again, and nothing is lost.
 * Read-only, nothing moves: the lines are only reported.
 */
export function setAsideJournalLines(
  journal: string,
  end: number,
  invalid: readonly InvalidJournalLine[],
  readOnly: boolean,
): SetAsideLine[] {
  let target: string | null = null;
  if (!readOnly) {
    const folder = setAsideFolder(journal);
    let n = 1;
    while (existsSync(join(folder, `journal.${n}.ndjson`))) n++;
    target = join(folder, `journal.${n}.ndjson`);
    writeFileAtomicSync(
      target,
      invalid.map((l) => `${l.text}\n`),
    );
    copyWithout(journal, end, invalid);
  }
  return invalid.map(({ line, seq, field, reason }) => {
    return { file: journal, line, seq, field, reason, moved_to: target };
  });
}

/** Rewrites `path` as its first `end` bytes less the byte ranges of `cuts` (in file order). */
function copyWithout(path: string, end: number, cuts: readonly InvalidJournalLine[]): void {
  const source = openSync(path, "r");
  const temp = tempName(path);
  let out: number | undefined;
  try {
    out = openSync(temp, "w", STATE_FILE_MODE);
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(end, 1)));
    const copy = (from: number, to: number) => {
      for (let at = from; at < to; ) {
        const read = readSync(source, chunk, 0, Math.min(chunk.length, to - at), at);
        if (read <= 0) throw new Error(`${path}: ended before byte ${to}`);
        writeSync(out as number, chunk, 0, read);
        at += read;
      }
    };
    let at = 0;
    for (const cut of cuts) {
      copy(at, cut.offset);
      at = cut.offset + cut.bytes;
    }
    copy(at, end);
    fsyncSync(out);
    closeSync(out);
    out = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (out !== undefined) closeSync(out);
    try {
      unlinkSync(temp);
    } catch {}
    throw error;
  } finally {
    closeSync(source);
  }
  fsyncDirSync(dirname(path));
}
