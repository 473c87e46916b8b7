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
}

export function appendQuarantine(path: string, records: readonly QuarantineRecord[]): void {
  if (records.length === 0) return;
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "a+", 0o600);
  try {
    // A record torn by a crash has no newline: start on a fresh line so this one stays whole.
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10;
    writeSync(fd, (torn ? "\n" : "") + records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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
