import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
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
  const fd = openSync(path, "a", 0o600);
  try {
    writeSync(fd, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
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
