import {
  closeSync,
  existsSync,
  fstatSync,
  fsync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  truncateSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { currentKey } from "../core/ingest/event-keys.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { fsyncDirSync, STATE_DIR_MODE, STATE_FILE_MODE, writeFileAtomicSync } from "./atomic.js";
import { type BufferMeta, emptyMeta, readBufferMeta } from "./buffer-meta.js";
import {
  CHUNK_BYTES,
  copyTail,
  inPieces,
  JournalBytes,
  journalLine,
  journalLineBytes,
  peekKeyAndSeq,
  type SerializedEvent,
  serializeEvent,
  shareRepeated,
} from "./journal-lines.js";
import {
  HeldLines,
  type InvalidJournalLine,
  NOT_JSON,
  type SetAsideLine,
  setAsideJournalLines,
} from "./journal-set-aside.js";
import type { StatePaths } from "./paths.js";
import { readSeenKeys } from "./seen-keys.js";
import { bufferedEventProblem, readingStateFile } from "./state-file-check.js";

export type { BufferMeta };

// Callers size and lay out journal lines through the buffer, as before the split.
export { journalLine, journalLineBytes, type SerializedEvent, serializeEvent };

export interface StoredEvent {
  event: MemoryEvent;
  /** Bytes of its journal line: what the buffer budget counts. */
  bytes: number;
}

/**
 * The Director's durable event buffer: an append-only journal (one JSON event per line,
 * fsynced per batch), the keys of already-compacted events for deduplication, and a small
 * meta file. A torn last line left by a crash is cut off on open; it was never acknowledged.
 */
export interface OpenOptions {
  /** For status and checks while a Director may be writing: repairs nothing. */
  readOnly?: boolean;
  /**
   * Keep the events in memory (a cycle needs them). Ingest only needs their keys, count and
   * size: without them it allocates far less and loads the journal faster.
   */
  retainEvents?: boolean;
  /** Told of journal lines set aside as no buffered event (`journal-set-aside.ts`). */
  onSetAside?: (lines: readonly SetAsideLine[]) => void;
}

export class EventBuffer {
  readonly events: StoredEvent[] = [];
  /** Journal lines set aside since the buffer was opened: no buffered event, never loaded. */
  readonly setAside: SetAsideLine[] = [];
  totalBytes = 0;
  meta: BufferMeta;
  /**
   * How to make room when an event would pass a hard budget: set by whoever owns the buffer
   * under the Director lock (it compacts the oldest slice, as a cycle would). Without it an
   * ingest only appends, and the next cycle restores the budgets.
   */
  roomMaker: ((event: SerializedEvent) => Promise<void>) | undefined;
  /**
   * The last seq when opened: greater ones were appended here, from lines this process's
   * Ingestor checked and redacted (a compaction need not check them again).
   */
  heldAtOpen = 0;
  private eventCount = 0;
  private readonly keys = new Set<string>();
  private readonly compactedKeys: string[] = [];
  private fd: number | undefined;
  /** Lines written and not yet fsynced. */
  private unsynced = false;
  /** Bytes of the journal file as this buffer read and wrote it: whole lines only. */
  private fileBytes = 0;
  /**
   * The journal's lines are those of `events`, in order, byte for byte (no duplicate skipped
   * on load, no key read in an older form): what a compaction keeps is then the file's tail,
   * copied as it is instead of serialized again.
   */
  private verbatim = true;
  /** The lines of an append, laid out as bytes before they are written. */
  private lineBytes: JournalBytes | undefined;

  private constructor(
    private readonly paths: StatePaths,
    meta: BufferMeta,
    private retainEvents: boolean,
    private readonly options: OpenOptions,
  ) {
    this.meta = meta;
  }

  static open(paths: StatePaths, options: OpenOptions = {}): EventBuffer {
    if (!options.readOnly)
      mkdirSync(dirname(paths.journal), { recursive: true, mode: STATE_DIR_MODE });
    const meta = existsSync(paths.meta) ? readBufferMeta(paths.meta) : emptyMeta();
    const buffer = new EventBuffer(paths, meta, options.retainEvents !== false, options);
    for (const key of readSeenKeys(paths.seen, options.readOnly === true)) {
      buffer.keys.add(key);
      buffer.compactedKeys.push(key);
    }
    if (existsSync(paths.journal)) {
      readingStateFile(paths.journal, () => buffer.loadJournal(false));
    }
    buffer.heldAtOpen = buffer.meta.last_seq;
    return buffer;
  }

  /**
   * Reads the journal a few MB at a time, so a large buffer is never held twice in memory,
   * through one buffer reused from chunk to chunk: a fresh buffer per chunk (and a copy per
   * line cut by a chunk's end) left the allocator holding some 20 MB more for the rest of
   * the process.
   */
  private loadJournal(reloading: boolean): void {
    const readOnly = this.options.readOnly === true;
    const fd = openSync(this.paths.journal, "r");
    let validEnd = 0;
    let lineNumber = 0;
    const invalid: InvalidJournalLine[] = [];
    const tail = new HeldLines();
    let fileSize = 0;
    // For this load only: one string per repeated value (see `REPEATED_FIELDS`).
    const strings = new Map<string, string>();
    try {
      fileSize = fstatSync(fd).size;
      let data = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, fileSize));
      // Bytes at the start of `data` that begin a line not read to its end yet.
      let carried = 0;
      let position = 0;
      while (position < fileSize) {
        if (carried === data.length) {
          // One line longer than the buffer: room for the rest of it.
          const larger = Buffer.allocUnsafe(2 * data.length);
          data.copy(larger, 0, 0, carried);
          data = larger;
        }
        const want = Math.min(data.length - carried, fileSize - position);
        const read = readSync(fd, data, carried, want, position);
        if (read <= 0) break;
        position += read;
        const filled = data.subarray(0, carried + read);
        let start = 0;
        for (;;) {
          const newline = filled.indexOf(10, start);
          if (newline === -1) break;
          const line = filled.toString("utf8", start, newline);
          const bytes = newline - start + 1;
          lineNumber++;
          const loaded = this.loadLine(line, bytes, strings);
          const offset = position - filled.length + start;
          start = newline + 1;
          // A line the first load took whole (unparsed) is no torn tail when read again.
          if (loaded === false && !reloading) {
            tail.hold({ ...NOT_JSON, line: lineNumber, offset, bytes, text: line });
            continue;
          }
          // A line follows: what was held is inside the journal, no crash's tail.
          for (const junk of tail.release()) {
            invalid.push(junk);
            validEnd += junk.bytes;
          }
          if (loaded !== true) {
            const problem = loaded || NOT_JSON;
            invalid.push({ ...problem, line: lineNumber, offset, bytes, text: line });
          }
          validEnd += bytes;
        }
        filled.copyWithin(0, start);
        carried = filled.length - start;
      }
    } finally {
      closeSync(fd);
    }
    this.fileBytes = validEnd;
    if (invalid.length > 0) {
      this.setAsideLines(invalid, validEnd, readOnly);
      return;
    }
    // A torn tail was never fsynced as a whole line, so it was never acknowledged.
    if (validEnd < fileSize && !readOnly) truncateSync(this.paths.journal, validEnd);
  }

  /** Moves lines that are no buffered event out of the journal (read-only: reports them only). */
  private setAsideLines(invalid: InvalidJournalLine[], end: number, readOnly: boolean): void {
    // An append descriptor would go on writing the replaced file.
    if (!readOnly) this.closeJournal();
    const lines = setAsideJournalLines(this.paths.journal, end, invalid, readOnly);
    if (readOnly) this.verbatim = false;
    else for (const line of invalid) this.fileBytes -= line.bytes;
    for (const line of lines) this.setAside.push(line);
    this.options.onSetAside?.(lines);
  }

  /** True when loaded (or a duplicate), false when not JSON, else why it is no buffered event. */
  private loadLine(
    line: string,
    bytes: number,
    strings: Map<string, string>,
  ): boolean | Pick<InvalidJournalLine, "field" | "reason" | "seq"> {
    let key: string;
    let seq: number;
    let receivedAt: string | undefined;
    let event: MemoryEvent | undefined;
    const fast = this.retainEvents ? undefined : peekKeyAndSeq(line);
    if (fast) {
      key = fast.key;
      seq = fast.seq;
    } else {
      try {
        event = JSON.parse(line) as MemoryEvent;
      } catch {
        return false;
      }
      const problem = bufferedEventProblem(event);
      if (problem !== undefined) {
        const seq = (event as { seq?: unknown } | null)?.seq;
        return { ...problem, seq: Number.isSafeInteger(seq) ? (seq as number) : null };
      }
      key = event.key;
      seq = event.seq;
      receivedAt = event.received_at;
    }
    // An event id stored raw by an older version: deduplicate it by today's key.
    const stored = key;
    key = currentKey(key);
    if (key !== stored) {
      // The line keeps its old form: a rewrite must serialize it again.
      this.verbatim = false;
      if (event !== undefined) event.key = key;
    }
    if (this.keys.has(key)) {
      this.verbatim = false;
      return true;
    }
    this.keys.add(key);
    if (this.retainEvents && event) {
      shareRepeated(event, strings);
      this.events.push({ event, bytes });
    }
    this.eventCount++;
    this.totalBytes += bytes;
    if (seq > this.meta.last_seq) this.meta.last_seq = seq;
    if (
      receivedAt !== undefined &&
      (this.meta.last_received_at === undefined || receivedAt > this.meta.last_received_at)
    ) {
      this.meta.last_received_at = receivedAt;
    }
    return true;
  }

  /**
   * Loads the events of a buffer opened without them (an ingest that must compact to stay
   * within the hard budgets needs them); from now on appended events are kept too.
   */
  loadEvents(): void {
    if (this.retainEvents) return;
    this.retainEvents = true;
    this.keys.clear();
    for (const key of this.compactedKeys) this.keys.add(key);
    this.eventCount = 0;
    this.totalBytes = 0;
    this.verbatim = true;
    if (existsSync(this.paths.journal)) this.loadJournal(true);
  }

  /**
   * The index of the first of `items` (from `start`) that would take the buffer past `limits`
   * (`items.length` when all fit): keys already held, or repeated among the items, cost
   * nothing, as in `append`.
   */
  fitting(items: readonly SerializedEvent[], start: number, limits: BufferLimits): number {
    // The common case, far from the budgets: a bound on the bytes (3 UTF-8 bytes at most per
    // UTF-16 unit, and a sequence number under 20 digits) settles it without counting.
    let bound = 0;
    for (let i = start; i < items.length; i++) bound += (items[i] as SerializedEvent).body.length;
    const n = items.length - start;
    if (
      this.eventCount + n <= limits.maxEvents &&
      this.totalBytes + 3 * bound + 28 * n <= limits.maxBytes
    ) {
      return items.length;
    }
    let count = this.eventCount;
    let bytes = this.totalBytes;
    let seq = this.meta.last_seq;
    const fresh = new Set<string>();
    let i = start;
    for (; i < items.length; i++) {
      const item = items[i] as SerializedEvent;
      if (this.keys.has(item.key) || fresh.has(item.key)) continue;
      const lineBytes = journalLineBytes(item.body, seq + 1);
      if (count + 1 > limits.maxEvents || bytes + lineBytes > limits.maxBytes) break;
      fresh.add(item.key);
      count++;
      bytes += lineBytes;
      seq++;
    }
    return i;
  }

  has(key: string): boolean {
    return this.keys.has(currentKey(key));
  }

  get count(): number {
    return this.eventCount;
  }

  /**
   * Appends events and fsyncs the journal once for the whole batch (group commit). When this
   * returns, the events are durable and may be acknowledged. Events arrive serialized (the
   * normalizing may have happened in a worker thread); a key already held is skipped.
   * Returns the events added.
   *
   * With `sync` false the lines are written but not yet fsynced: nothing may be acknowledged
   * until `sync()` (or a later synced append) returns. A reader of a large file writes in
   * small batches, so that few events are alive at once, and fsyncs per group of them.
   */
  append(items: readonly SerializedEvent[], sync = true): SerializedEvent[] {
    const added: SerializedEvent[] = [];
    this.lineBytes ??= new JournalBytes((data, length) => this.writeJournal(data, length));
    for (const item of items) {
      // Ingest writes today's keys; a caller holding an older one is deduplicated alike.
      const key = currentKey(item.key);
      if (this.keys.has(key)) continue;
      this.keys.add(key);
      const seq = this.meta.last_seq + 1;
      this.meta.last_seq = seq;
      const bytes = this.lineBytes.add(seq, item.body);
      this.totalBytes += bytes;
      if (this.retainEvents) {
        const line = `{"seq":${seq},${item.body.slice(1)}`;
        this.events.push({ event: JSON.parse(line) as MemoryEvent, bytes });
      }
      this.eventCount++;
      if (
        this.meta.last_received_at === undefined ||
        item.received_at > this.meta.last_received_at
      ) {
        this.meta.last_received_at = item.received_at;
      }
      added.push(item);
    }
    if (added.length === 0) {
      if (sync) this.sync();
      return added;
    }
    this.lineBytes.flush();
    if (sync) fsyncSync(this.fd as number);
    this.unsynced = !sync;
    return added;
  }

  /** Appends bytes of whole lines to the journal, opening it at the first. */
  private writeJournal(data: Buffer, length: number): void {
    if (this.fd === undefined) {
      const existed = existsSync(this.paths.journal);
      this.fd = openSync(this.paths.journal, "a", STATE_FILE_MODE);
      if (!existed) fsyncDirSync(dirname(this.paths.journal));
    }
    this.fileBytes += length;
    writeSync(this.fd, data, 0, length);
  }

  /** Fsyncs what `append(items, false)` wrote: from here on it may be acknowledged. */
  sync(): void {
    if (this.fd !== undefined && this.unsynced) fsyncSync(this.fd);
    this.unsynced = false;
  }

  /**
   * Like `sync`, on libuv's thread pool: the caller goes on normalizing while the disk
   * works. Only what was written before the call is covered, and nothing may be acknowledged
   * before the promise settles; the caller settles it before `closeJournal`.
   */
  syncInBackground(): Promise<void> {
    const fd = this.fd;
    if (fd === undefined || !this.unsynced) return Promise.resolve();
    this.unsynced = false;
    return new Promise((resolve, reject) => {
      fsync(fd, (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Drops the events up to `throughSeq` once their engrams are durable: their keys join the
   * deduplication list first, then the journal is rewritten without them, atomically.
   */
  dropThrough(throughSeq: number, metaUpdate: Partial<BufferMeta>, dedupWindow: number): void {
    if (!this.retainEvents) throw new Error("dropThrough needs a buffer opened with its events");
    const dropped = this.events.filter((s) => s.event.seq <= throughSeq);
    if (dropped.length > 0) {
      const keys = dropped.map((s) => currentKey(s.event.key));
      // A loop, not push(...keys): spreading 150k+ arguments overflows the stack.
      for (const key of keys) this.compactedKeys.push(key);
      // In pieces: the keys of a whole buffer joined are MBs of string (the whole window,
      // a million keys by default, some 70 MB), and as many again copied for the write.
      if (this.compactedKeys.length > dedupWindow * 2) {
        this.compactedKeys.splice(0, this.compactedKeys.length - dedupWindow);
        writeFileAtomicSync(
          this.paths.seen,
          inPieces(this.compactedKeys, (key) => `${key}\n`),
        );
      } else {
        const fd = openSync(this.paths.seen, "a", STATE_FILE_MODE);
        try {
          for (const piece of inPieces(keys, (key) => `${key}\n`)) writeSync(fd, piece);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    const kept = this.events.filter((s) => s.event.seq > throughSeq);
    this.closeJournal();
    this.rewriteJournal(kept);
    this.events.length = 0;
    for (const stored of kept) this.events.push(stored);
    this.eventCount = kept.length;
    this.totalBytes = kept.reduce((sum, s) => sum + s.bytes, 0);
    this.meta = { ...this.meta, ...metaUpdate };
    this.saveMeta();
  }

  /**
   * Replaces the journal, atomically, by the lines of `kept`. They are the newest events, so
   * when the file holds exactly the buffer's lines they are its tail: copied as bytes (a
   * compaction for room keeps half a buffer, dozens of times in one large ingest, and
   * serializing it again each time cost more than the copy). Otherwise each line is
   * serialized again, and its size taken from the new line.
   */
  private rewriteJournal(kept: readonly StoredEvent[]): void {
    let keptBytes = 0;
    for (const s of kept) keptBytes += s.bytes;
    const from = this.fileBytes - keptBytes;
    if (
      this.verbatim &&
      this.fileBytes === this.totalBytes &&
      keptBytes > 0 &&
      copyTail(this.paths.journal, from, keptBytes)
    ) {
      this.fileBytes = keptBytes;
      return;
    }
    writeFileAtomicSync(
      this.paths.journal,
      inPieces(kept, (s) => {
        const line = journalLine(s.event);
        s.bytes = Buffer.byteLength(line, "utf8");
        return line;
      }),
    );
    this.fileBytes = kept.reduce((sum, s) => sum + s.bytes, 0);
    this.verbatim = true;
  }

  saveMeta(): void {
    writeFileAtomicSync(this.paths.meta, `${JSON.stringify(this.meta)}\n`);
  }

  closeJournal(): void {
    this.sync();
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

/** The buffer's hard budgets (`memory.buffer_max_events`, `memory.buffer_max_bytes`). */
export interface BufferLimits {
  maxEvents: number;
  maxBytes: number;
}

/** Whether the buffer holds a part of an ended session (`session_end.v1`) to consolidate. */
export function holdsSessionEnd(buffer: EventBuffer): boolean {
  return buffer.events.some((s) => s.event.type === "session_end.v1");
}
