import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { StringDecoder } from "node:string_decoder";
import {
  addDrop,
  coalesceRuns,
  DEFAULT_QUARANTINE_LIMITS,
  type DropCount,
  emptyDrops,
  emptyGeneration,
  type GenerationState,
  linesOf,
  planQuarantineAppend,
  type QuarantineLimits,
  senderOf,
} from "../core/ingest/quarantine-plan.js";
import { clipText } from "../core/model/text.js";
import { fsyncDirSync, STATE_DIR_MODE, writeFileAtomicSync } from "./atomic.js";
import { rotatedLogPath } from "./capped-log.js";

export { DEFAULT_QUARANTINE_LIMITS, type QuarantineLimits };

/** One rejected input line (or a run of alike lines), kept with where it came from and why. Never holds a secret. */
export interface QuarantineRecord {
  received_at: string;
  source: string;
  line: number;
  reason: string;
  detail: string;
  /** The start of the (first) rejected line, redacted. */
  excerpt: string;
  /** Bytes of the rejected input (of every line of a run). */
  bytes: number;
  /**
   * The rejected line's identity (`quarantineKey`): the same line of the same source read
   * again is recorded once. Absent in records written before keys existed.
   */
  key?: string;
  /** Lines of a run of alike lines (same source, reason, detail); absent: one. */
  count?: number;
  /** The last line of the run. */
  last_line?: number;
}

/** What the quarantine did not keep (`quarantine-dropped.json`): "N lines dropped, M bytes". */
export interface QuarantineDropped {
  lines: number;
  bytes: number;
  /** The senders that lost the most (at most `MAX_SENDERS_SHOWN`). */
  by_sender: Record<string, { lines: number; bytes: number }>;
}

const MAX_SENDERS_SHOWN = 16;
/** A record's `detail` is cut to this many characters (a schema's message can be long). */
const DETAIL_MAX_CHARS = 200;
/** A key's length: 128 bits of the digest tell lines apart as well as 256 do. */
const KEY_CHARS = 32;

/** The generation rotated out: read with the current one, replaced at the next rotation. */
export const rotatedQuarantinePath = rotatedLogPath;

/** The summary of what was dropped, beside the quarantine. */
export function droppedQuarantinePath(path: string): string {
  return path.replace(/(\.ndjson)?$/, "-dropped.json");
}

/** A digest of where a line came from and all of its text (a digest only: no secret in clear). */
export function quarantineKey(source: string, line: number, text: string): string {
  return process
    .getBuiltinModule("node:crypto")
    .createHash("sha256")
    .update(`${source}\n${line}\n`)
    .update(text)
    .digest("hex")
    .slice(0, KEY_CHARS);
}

/** The keys of the records already in the quarantine (both generations). */
export function quarantineKeys(path: string): Set<string> {
  const keys = new Set<string>();
  for (const record of readQuarantine(path)) {
    if (record.key !== undefined) keys.add(record.key.slice(0, KEY_CHARS));
  }
  return keys;
}

/** The current generation's size and senders, as last counted; recounted when the size differs. */
const generations = new Map<string, { size: number; state: GenerationState }>();

/**
 * Appends records, fsynced, within `limits`: a run of alike lines is one record, the file is
 * rotated (one earlier generation kept) when full, and what a sender sends past its share is
 * counted in `quarantine-dropped.json` instead. Given `seen` (the keys already recorded, kept
 * up to date here), a record whose key is in it is not written again, so re-reading a file
 * does not grow the quarantine. Returns how many records were written.
 */
export function appendQuarantine(
  path: string,
  records: readonly QuarantineRecord[],
  seen?: Set<string>,
  limits: QuarantineLimits = DEFAULT_QUARANTINE_LIMITS,
): number {
  // Runs first, then the keys: a run read again starts at the same line, so has the same key.
  const runs = coalesceRuns(records);
  const fresh = seen === undefined ? runs : runs.filter((r) => isNew(r, seen));
  if (fresh.length === 0) return 0;
  mkdirSync(dirname(path), { recursive: true, mode: STATE_DIR_MODE });
  let current = openSync(path, "a+", 0o600);
  let written = 0;
  let dropped = emptyDrops();
  try {
    const size = fstatSync(current).size;
    const cached = generations.get(path);
    const before = cached?.size === size ? cached.state : countGeneration(path, size, limits);
    const plan = planQuarantineAppend(before, fresh, limits, encodeRecord);
    dropped = plan.dropped;
    for (const [i, segment] of plan.segments.entries()) {
      if (i > 0) {
        closeSync(current);
        current = -1;
        rotate(path, dropped);
        current = openSync(path, "a+", 0o600);
      }
      if (segment.text === "") continue;
      // A record torn by a crash has no newline: start on a fresh line so this one stays whole.
      const at = fstatSync(current).size;
      const last = Buffer.alloc(1);
      const torn = at > 0 && readSync(current, last, 0, 1, at - 1) === 1 && last[0] !== 10;
      writeSync(current, (torn ? "\n" : "") + segment.text);
      fsyncSync(current);
      written += segment.records.length;
    }
    generations.set(path, { size: fstatSync(current).size, state: plan.after });
  } finally {
    if (current >= 0) closeSync(current);
  }
  if (dropped.lines > 0) recordDropped(path, dropped);
  return written;
}

function encodeRecord(record: QuarantineRecord): string {
  return JSON.stringify({ ...record, detail: clipText(record.detail, DETAIL_MAX_CHARS) });
}

function isNew(record: QuarantineRecord, seen: Set<string>): boolean {
  if (record.key === undefined) return true;
  const key = record.key.slice(0, KEY_CHARS);
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/** The current generation read back (a file far over the cap is not parsed: it is rotated at once). */
function countGeneration(path: string, size: number, limits: QuarantineLimits): GenerationState {
  if (size > limits.maxBytes * 2) {
    return { bytes: size, records: Number.MAX_SAFE_INTEGER, bySender: new Map() };
  }
  const state = emptyGeneration();
  state.bytes = size;
  for (const { record, bytes } of readRecords(path)) {
    state.records++;
    const sender = senderOf(record.source);
    const had = state.bySender.get(sender) ?? { records: 0, bytes: 0 };
    state.bySender.set(sender, { records: had.records + 1, bytes: had.bytes + bytes });
  }
  return state;
}

/** The current generation becomes the earlier one; the earlier one's lines are counted as dropped. */
function rotate(path: string, dropped: DropCount): void {
  const earlier = rotatedQuarantinePath(path);
  for (const { record } of readRecords(earlier)) {
    addDrop(dropped, senderOf(record.source), linesOf(record), record.bytes);
  }
  renameSync(path, earlier);
  fsyncDirSync(dirname(path));
  generations.delete(path);
}

function recordDropped(path: string, drops: DropCount): void {
  const file = droppedQuarantinePath(path);
  const before = readDropped(path);
  const bySender = new Map(Object.entries(before.by_sender));
  for (const [sender, d] of drops.bySender) {
    const had = bySender.get(sender) ?? { lines: 0, bytes: 0 };
    bySender.set(sender, { lines: had.lines + d.lines, bytes: had.bytes + d.bytes });
  }
  const top = [...bySender].sort((a, b) => b[1].lines - a[1].lines || (a[0] < b[0] ? -1 : 1));
  const summary: QuarantineDropped = {
    lines: before.lines + drops.lines,
    bytes: before.bytes + drops.bytes,
    by_sender: Object.fromEntries(top.slice(0, MAX_SENDERS_SHOWN)),
  };
  writeFileAtomicSync(file, `${JSON.stringify(summary)}\n`);
}

/** What the quarantine dropped so far (zero when nothing was). */
export function readDropped(path: string): QuarantineDropped {
  const zero: QuarantineDropped = { lines: 0, bytes: 0, by_sender: {} };
  const file = droppedQuarantinePath(path);
  if (!existsSync(file)) return zero;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<QuarantineDropped>;
    return {
      lines: Number(parsed.lines) || 0,
      bytes: Number(parsed.bytes) || 0,
      by_sender: typeof parsed.by_sender === "object" && parsed.by_sender ? parsed.by_sender : {},
    };
  } catch {
    return zero; // torn by hand: counting starts again
  }
}

/** Every record of a file with its line's size, read in pieces (an old file may be large). */
function* readRecords(path: string): Generator<{ record: QuarantineRecord; bytes: number }> {
  if (!existsSync(path)) return;
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(1 << 20);
    const decoder = new StringDecoder("utf8");
    let rest = "";
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      const text = rest + (n > 0 ? decoder.write(chunk.subarray(0, n)) : `${decoder.end()}\n`);
      const lines = text.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (line.length === 0) continue;
        try {
          const record = JSON.parse(line) as QuarantineRecord;
          yield { record, bytes: Buffer.byteLength(line, "utf8") + 1 };
        } catch {
          // a torn last record from a crash: the input line is still in its spool or file
        }
      }
      if (n === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** The records of both generations, oldest first. */
export function readQuarantine(path: string): QuarantineRecord[] {
  const out: QuarantineRecord[] = [];
  for (const file of [rotatedQuarantinePath(path), path]) {
    for (const { record } of readRecords(file)) out.push(record);
  }
  return out;
}
