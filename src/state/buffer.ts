import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import type { PendingEvent } from "../core/normalize.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { fsyncDirSync, writeFileAtomicSync } from "./atomic.js";
import type { StatePaths } from "./paths.js";

export interface StoredEvent {
  event: MemoryEvent;
  /** Bytes of its journal line: what the buffer budget counts. */
  bytes: number;
}

export interface BufferMeta {
  /** Highest sequence number ever assigned (compacted or not). */
  last_seq: number;
  /** Receipt time of the last compaction, for the rate limit. */
  last_compaction_at?: string;
  /** Recall hits of events already compacted out of the buffer. */
  recall_counts: Record<string, number>;
  compacted_events: number;
  /** Newest receipt stamp seen: the cycle time when the buffer is empty. */
  last_received_at?: string;
  /** Recall events up to this sequence number have been weighed for promotion. */
  recall_checked_seq: number;
}

function emptyMeta(): BufferMeta {
  return { last_seq: 0, recall_counts: {}, compacted_events: 0, recall_checked_seq: 0 };
}

/**
 * The Director's durable event buffer: an append-only journal (one JSON event per line,
 * fsynced per batch), the keys of already-compacted events for deduplication, and a small
 * meta file. A torn last line left by a crash is cut off on open; it was never acknowledged.
 */
export class EventBuffer {
  readonly events: StoredEvent[] = [];
  totalBytes = 0;
  meta: BufferMeta;
  private readonly keys = new Set<string>();
  private readonly compactedKeys: string[] = [];
  private fd: number | undefined;

  private constructor(
    private readonly paths: StatePaths,
    meta: BufferMeta,
  ) {
    this.meta = meta;
  }

  /** `readOnly`: for status and checks while a Director may be writing; repairs nothing. */
  static open(paths: StatePaths, options: { readOnly?: boolean } = {}): EventBuffer {
    if (!options.readOnly) mkdirSync(dirname(paths.journal), { recursive: true });
    const meta = existsSync(paths.meta)
      ? { ...emptyMeta(), ...(JSON.parse(readFileSync(paths.meta, "utf8")) as BufferMeta) }
      : emptyMeta();
    const buffer = new EventBuffer(paths, meta);
    if (existsSync(paths.seen)) {
      const text = readFileSync(paths.seen, "utf8");
      // A key cut short by a crash mid-append is not a key: drop it (and cut it off the file,
      // so the next append does not glue onto it).
      const whole = text.slice(0, text.lastIndexOf("\n") + 1);
      if (whole.length < text.length && !options.readOnly) {
        truncateSync(paths.seen, Buffer.byteLength(whole, "utf8"));
      }
      for (const key of whole.split("\n")) {
        if (key.length > 0) {
          buffer.keys.add(key);
          buffer.compactedKeys.push(key);
        }
      }
    }
    if (existsSync(paths.journal)) buffer.loadJournal(options.readOnly === true);
    return buffer;
  }

  private loadJournal(readOnly: boolean): void {
    const data = readFileSync(this.paths.journal);
    let start = 0;
    let validEnd = 0;
    while (start < data.length) {
      const newline = data.indexOf(10, start);
      if (newline === -1) break; // torn tail: never fsynced as a whole line, never acknowledged
      const line = data.toString("utf8", start, newline);
      let event: MemoryEvent | undefined;
      try {
        event = JSON.parse(line) as MemoryEvent;
      } catch {
        break;
      }
      if (!this.keys.has(event.key)) {
        this.keys.add(event.key);
        this.events.push({ event, bytes: newline - start + 1 });
        this.totalBytes += newline - start + 1;
        if (event.seq > this.meta.last_seq) this.meta.last_seq = event.seq;
        if (
          this.meta.last_received_at === undefined ||
          event.received_at > this.meta.last_received_at
        ) {
          this.meta.last_received_at = event.received_at;
        }
      }
      start = newline + 1;
      validEnd = start;
    }
    if (validEnd < data.length && !readOnly) truncateSync(this.paths.journal, validEnd);
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  get count(): number {
    return this.events.length;
  }

  /**
   * Appends events and fsyncs the journal once for the whole batch (group commit). When this
   * returns, the events are durable and may be acknowledged.
   */
  append(pending: readonly PendingEvent[]): MemoryEvent[] {
    if (pending.length === 0) return [];
    const added: MemoryEvent[] = [];
    const lines: string[] = [];
    for (const p of pending) {
      if (this.keys.has(p.key)) continue;
      this.keys.add(p.key);
      const event = { ...p, seq: this.meta.last_seq + 1 } as MemoryEvent;
      this.meta.last_seq = event.seq;
      const line = `${JSON.stringify(event)}\n`;
      lines.push(line);
      const bytes = Buffer.byteLength(line, "utf8");
      this.events.push({ event, bytes });
      this.totalBytes += bytes;
      if (
        this.meta.last_received_at === undefined ||
        event.received_at > this.meta.last_received_at
      ) {
        this.meta.last_received_at = event.received_at;
      }
      added.push(event);
    }
    if (lines.length === 0) return added;
    if (this.fd === undefined) {
      const existed = existsSync(this.paths.journal);
      this.fd = openSync(this.paths.journal, "a");
      if (!existed) fsyncDirSync(dirname(this.paths.journal));
    }
    writeSync(this.fd, Buffer.from(lines.join(""), "utf8"));
    fsyncSync(this.fd);
    return added;
  }

  /**
   * Drops the events up to `throughSeq` once their engrams are durable: their keys join the
   * deduplication list first, then the journal is rewritten without them, atomically.
   */
  dropThrough(throughSeq: number, metaUpdate: Partial<BufferMeta>, dedupWindow: number): void {
    const dropped = this.events.filter((s) => s.event.seq <= throughSeq);
    if (dropped.length > 0) {
      const keys = dropped.map((s) => s.event.key);
      this.compactedKeys.push(...keys);
      if (this.compactedKeys.length > dedupWindow * 2) {
        this.compactedKeys.splice(0, this.compactedKeys.length - dedupWindow);
        writeFileAtomicSync(this.paths.seen, `${this.compactedKeys.join("\n")}\n`);
      } else {
        const fd = openSync(this.paths.seen, "a");
        try {
          writeSync(fd, `${keys.join("\n")}\n`);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    const kept = this.events.filter((s) => s.event.seq > throughSeq);
    this.closeJournal();
    writeFileAtomicSync(
      this.paths.journal,
      kept.map((s) => `${JSON.stringify(s.event)}\n`).join(""),
    );
    this.events.splice(0, this.events.length, ...kept);
    this.totalBytes = kept.reduce((sum, s) => sum + s.bytes, 0);
    this.meta = { ...this.meta, ...metaUpdate };
    this.saveMeta();
  }

  saveMeta(): void {
    writeFileAtomicSync(this.paths.meta, `${JSON.stringify(this.meta)}\n`);
  }

  closeJournal(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
