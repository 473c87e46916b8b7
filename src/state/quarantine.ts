import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { STATE_DIR_MODE } from "./atomic.js";

/** One rejected input line, kept with where it came from and why. Never holds a secret. */
export interface QuarantineRecord {
  received_at: string;
  source: string;
  line: number;
  reason: string;
  detail: string;
  /** The start of the rejected line, redacted. */
  excerpt: string;
  bytes: number;
  /**
   * The rejected line's identity (`quarantineKey`): the same line of the same source read
   * again is recorded once. Absent in records written before keys existed.
   */
  key?: string;
}

/** A digest of where a line came from and all of its text (a digest only: no secret in clear). */
export function quarantineKey(source: string, line: number, text: string): string {
  return createHash("sha256").update(`${source}\n${line}\n`).update(text).digest("hex");
}

/** The keys of the records already in the quarantine. */
export function quarantineKeys(path: string): Set<string> {
  const keys = new Set<string>();
  for (const record of readQuarantine(path)) if (record.key !== undefined) keys.add(record.key);
  return keys;
}

/**
 * Appends records, fsynced. Given `seen` (the keys already recorded, kept up to date here), a
 * record whose key is in it is not written again, so re-reading a file does not grow the
 * quarantine. Returns how many records were written.
 */
export function appendQuarantine(
  path: string,
  records: readonly QuarantineRecord[],
  seen?: Set<string>,
): number {
  const fresh = seen === undefined ? records : records.filter((r) => isNew(r, seen));
  if (fresh.length === 0) return 0;
  mkdirSync(dirname(path), { recursive: true, mode: STATE_DIR_MODE });
  const fd = openSync(path, "a+", 0o600);
  try {
    // A record torn by a crash has no newline: start on a fresh line so this one stays whole.
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10;
    writeSync(fd, (torn ? "\n" : "") + fresh.map((r) => `${JSON.stringify(r)}\n`).join(""));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return fresh.length;
}

function isNew(record: QuarantineRecord, seen: Set<string>): boolean {
  if (record.key === undefined) return true;
  if (seen.has(record.key)) return false;
  seen.add(record.key);
  return true;
}

export function readQuarantine(path: string): QuarantineRecord[] {
  if (!existsSync(path)) return [];
  const out: QuarantineRecord[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.length === 0) continue;
    try {
      out.push(JSON.parse(line) as QuarantineRecord);
    } catch {
      // a torn last record from a crash: the input line is still in its spool or file
    }
  }
  return out;
}
