/**
 * The journal's lines as bytes on disk: how a line is laid out and read cheaply, and how a
 * rewritten journal is written (in pieces, or its tail copied as it is). `buffer.ts` owns
 * the journal; these are its file-level helpers.
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import type { PendingEvent } from "../core/ingest/normalize.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { fsyncDirSync, STATE_FILE_MODE, tempName } from "./atomic.js";

/** Bytes read (or copied) at a time: a large journal is never held whole. */
export const CHUNK_BYTES = 4 * 1024 * 1024;

/** Lines per write of a rewritten file: some 70 KB of keys, a few hundred KB of events. */
const LINES_PER_WRITE = 1024;

/** The lines of `items`, joined `LINES_PER_WRITE` at a time. */
export function* inPieces<T>(items: readonly T[], line: (item: T) => string): Generator<string> {
  for (let i = 0; i < items.length; i += LINES_PER_WRITE) {
    let piece = "";
    const end = Math.min(items.length, i + LINES_PER_WRITE);
    for (let k = i; k < end; k++) piece += line(items[k] as T);
    yield piece;
  }
}

/**
 * Fields whose values repeat from event to event by nature: one receipt stamp per ingest
 * batch, a few message types, and what a whole swarm reports alike in its heartbeats (the
 * main commit, the catalog seen). Parsing gives every event its own copy; a buffer of
 * 100,000 events held them at some 14 MB.
 */
const REPEATED_FIELDS = ["received_at", "type", "main_ancestor_sha", "catalog_hash_seen"] as const;

/** Points the event's repeated fields at the first equal string seen (`strings` remembers them). */
export function shareRepeated(event: MemoryEvent, strings: Map<string, string>): void {
  const fields = event as unknown as Record<string, unknown>;
  for (const field of REPEATED_FIELDS) {
    const value = fields[field];
    if (typeof value !== "string") continue;
    const held = strings.get(value);
    if (held === undefined) strings.set(value, value);
    else fields[field] = held;
  }
}

/**
 * Writes the `length` bytes of `path` from `from` on as the whole new `path` (temp, fsync,
 * rename, fsync of the folder). False, with nothing changed, when those bytes do not start
 * and end at a line's boundary: the caller then writes the lines itself.
 */
export function copyTail(path: string, from: number, length: number): boolean {
  const source = openSync(path, "r");
  let temp: string | undefined;
  try {
    const edge = Buffer.alloc(1);
    const lineStart =
      from === 0 || (readSync(source, edge, 0, 1, from - 1) === 1 && edge[0] === 10);
    const lineEnd = readSync(source, edge, 0, 1, from + length - 1) === 1 && edge[0] === 10;
    if (!lineStart || !lineEnd || fstatSync(source).size !== from + length) return false;
    temp = tempName(path);
    const out = openSync(temp, "w", STATE_FILE_MODE);
    try {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, length));
      for (let done = 0; done < length; ) {
        const read = readSync(source, chunk, 0, Math.min(chunk.length, length - done), from + done);
        if (read <= 0) throw new Error(`${path}: ended before byte ${from + length}`);
        writeSync(out, chunk, 0, read);
        done += read;
      }
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    renameSync(temp, path);
    temp = undefined;
  } finally {
    closeSync(source);
    if (temp !== undefined) {
      try {
        unlinkSync(temp);
      } catch {}
    }
  }
  fsyncDirSync(dirname(path));
  return true;
}

/**
 * The key and sequence number of a journal line without parsing the whole event: lines are
 * written as `{"seq":N,"key":"...",`. Anything unusual (an escape in the key, an older
 * layout) returns undefined and the caller parses the line.
 */
export function peekKeyAndSeq(line: string): { key: string; seq: number } | undefined {
  const m = /^\{"seq":(\d+),"key":"([^"\\]*)",/.exec(line);
  if (!m || line.charCodeAt(line.length - 1) !== 125) return undefined;
  return { seq: Number(m[1]), key: m[2] as string };
}

/** Bytes of the journal line `append` writes for a serialized body at sequence number `seq`. */
export function journalLineBytes(body: string, seq: number): number {
  // `{"seq":N,` + the body without its `{` + `\n`.
  return Buffer.byteLength(body, "utf8") + String(seq).length + 8;
}

/** The journal's line for an event: `seq` first, so `peekKeyAndSeq` can read it cheaply. */
export function journalLine(event: MemoryEvent): string {
  const { seq, ...rest } = event;
  return `{"seq":${seq},${JSON.stringify(rest).slice(1)}\n`;
}

/** A normalized event on its way into the journal: `body` is its JSON without `seq`. */
export interface SerializedEvent {
  key: string;
  body: string;
  received_at: string;
  redactions: number;
}

export function serializeEvent(event: PendingEvent): SerializedEvent {
  return {
    key: event.key,
    body: JSON.stringify(event),
    received_at: event.received_at,
    redactions: event.redactions,
  };
}

const SEQ_PREFIX = [...'{"seq":'].map((c) => c.charCodeAt(0));

/** `{"seq":N` at `start`, byte by byte (as `${seq}` writes a whole number); returns its end. */
function writeSeq(data: Buffer, start: number, seq: number): number {
  let at = start;
  for (const code of SEQ_PREFIX) data[at++] = code;
  let digits = 1;
  for (let n = seq; n >= 10; n = Math.floor(n / 10)) digits++;
  for (let k = digits - 1, n = seq; k >= 0; k--, n = Math.floor(n / 10)) {
    data[at + k] = 48 + (n % 10);
  }
  return at + digits;
}

/** Bytes held before they are written out: a batch of long lines is written in a few pieces. */
const MAX_HELD_BYTES = 4 * 1024 * 1024;
const COMMA = 44;
const NEWLINE = 10;
const OPEN_BRACE = 123;

/**
 * Journal lines laid out as UTF-8 straight into one reused buffer: no string per line and no
 * joined copy of a batch (building, joining and encoding them cost about as much as the
 * events' `JSON.stringify`). The bytes are those of `{"seq":N,` + the body without its `{`
 * + `\n`, as `journalLineBytes` counts them.
 */
export class JournalBytes {
  private data = Buffer.allocUnsafe(64 * 1024);
  private held = 0;

  constructor(private readonly writeOut: (data: Buffer, length: number) => void) {}

  /** Adds the line of `body` at `seq`; returns its bytes. */
  add(seq: number, body: string): number {
    // A UTF-16 unit is at most 3 UTF-8 bytes; the prefix at most 28 with its comma.
    const room = 3 * body.length + 32;
    if (this.held + room > this.data.length) this.makeRoom(room);
    const start = this.held;
    const data = this.data;
    let at =
      Number.isSafeInteger(seq) && seq >= 0
        ? writeSeq(data, start, seq)
        : start + data.write(`{"seq":${seq}`, start, "latin1");
    if (body.charCodeAt(0) === OPEN_BRACE) {
      // The body's `{` stands where the comma goes: written whole, then that byte replaced.
      const comma = at;
      at += data.write(body, at, "utf8");
      data[comma] = COMMA;
    } else {
      data[at++] = COMMA;
      at += data.write(body.slice(1), at, "utf8");
    }
    data[at++] = NEWLINE;
    this.held = at;
    return at - start;
  }

  /** Writes out what is held. */
  flush(): void {
    if (this.held === 0) return;
    const held = this.held;
    this.held = 0;
    this.writeOut(this.data, held);
  }

  /** Grows the buffer up to MAX_HELD_BYTES; past it, writes out what is held first. */
  private makeRoom(room: number): void {
    const need = this.held + room;
    if (need > MAX_HELD_BYTES && this.held > 0) {
      this.flush();
      if (room <= this.data.length) return;
    }
    const larger = Buffer.allocUnsafe(
      Math.max(this.held + room, Math.min(2 * this.data.length, MAX_HELD_BYTES)),
    );
    this.data.copy(larger, 0, 0, this.held);
    this.data = larger;
  }
}
