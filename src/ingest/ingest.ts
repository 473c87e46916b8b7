import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { quarantineExcerpt } from "../core/ingest/event-keys.js";
import { quarantineLimits } from "../core/ingest/quarantine-plan.js";
import { type Redactor, redactorFor } from "../core/ingest/redact.js";
import { StateError } from "../errors.js";
import type { BufferLimits, EventBuffer, SerializedEvent } from "../state/buffer.js";
import {
  appendQuarantine,
  type QuarantineLimits,
  type QuarantineRecord,
  quarantineKey,
  quarantineKeys,
} from "../state/quarantine.js";
import { loadSealKey } from "../state/seal-key.js";
import { zeroCounts } from "./counts.js";
import { IngestPool } from "./ingest-pool.js";
import { CHUNK_CHARS } from "./ingest-readable.js";
import {
  type InputLine,
  isBlank,
  loadEnvelopeSchemas,
  normalizeBatch,
  type PackedOutcomes,
  splitLines,
  unpackEvents,
} from "./normalize-batch.js";

export { type IngestCounts, type SourceDrain, zeroCounts } from "./counts.js";
// Reading a stream or file in chunks lives apart; its callers import it from here.
export { CHUNK_CHARS, ingestFile, ingestReadable } from "./ingest-readable.js";

export interface IngestTarget {
  buffer: EventBuffer;
  quarantinePath: string;
  /** `[quarantine]`: its disk budget; the defaults when absent. */
  quarantineLimits?: QuarantineLimits;
  redactor: Redactor;
  sealKey: Uint8Array | undefined;
  maxMessageBytes: number;
  /** The buffer's hard budgets, and how to make room: compact the oldest slice, as a cycle. */
  room?: { limits: BufferLimits; make: (event: SerializedEvent) => Promise<void> };
}

/** The Ingestor every Director path uses: the repository's redaction rules, seal key and size limit. */
export function ingestorFor(
  ctx: RepoContext,
  buffer: EventBuffer,
  options: { parallel?: boolean; largeInput?: boolean } = {},
): Ingestor {
  const target: IngestTarget = {
    buffer,
    quarantinePath: ctx.paths.quarantine,
    quarantineLimits: quarantineLimits(ctx.config.quarantine),
    redactor: redactorFor(ctx.config),
    sealKey: loadSealKey(ctx.paths.sealKey, true),
    maxMessageBytes: ctx.config.agent_bus.max_message_bytes,
    ...(buffer.roomMaker
      ? {
          room: {
            limits: {
              maxEvents: ctx.config.memory.buffer_max_events,
              maxBytes: ctx.config.memory.buffer_max_bytes,
            },
            make: buffer.roomMaker,
          },
        }
      : {}),
  };
  const pool = options.parallel
    ? () => IngestPool.create({ ...target, patterns: ctx.config.redaction.patterns })
    : undefined;
  const ingestor = new Ingestor(target, pool);
  // A large file: start the threads now, so they load while the first chunk is read.
  if (options.largeInput) void ingestor.startPool();
  return ingestor;
}

/** Lines per group commit: one journal write and one fsync for each batch. */
export const BATCH_LINES = 4096;
/**
 * Lines per journal write while reading a large input on this thread: few events alive at
 * once keeps the garbage collector's copying small. Their fsync still comes per BATCH_LINES.
 */
const WRITE_LINES = 1024;
/**
 * A batch is normalized and written in slices of this many lines: a quarter of the garbage
 * alive at once (some 100 ms less CPU on a large input). Its fsync and quarantine records
 * still come where whole batches end, as before: the same files, however it is sliced.
 */
const SLICE_LINES = 256;
/** A file this large starts the worker threads at once. */
export const LARGE_FILE_BYTES = 4 * CHUNK_CHARS;
/** Chunks read before worker threads are started: small inputs never pay for them. */
const CHUNKS_BEFORE_POOL = 2;

export type { InputLine };

interface TakenBatch {
  events: SerializedEvent[];
  quarantine: QuarantineRecord[];
  quarantineRedactions: number;
}
const NEEDS_SCHEMAS = Symbol("needs-schemas");

/**
 * Normalizes and stores lines in batches. "Accepted" means durable: a large input (read on
 * this thread, or normalized by worker threads) is written in small batches, fsynced per
 * group of them in the background, and `drain()` fsyncs the rest before it returns, so
 * counts are read after it. Bad lines go to the quarantine with their source, line number and
 * reason; nothing stops the batch. Given a pool factory, a large input is normalized by
 * worker threads; results are still applied in input order.
 */
export class Ingestor {
  readonly counts = zeroCounts();
  /** Quarantined lines that are `worker emit --from` notes: the caller names the mistake. */
  noteLines = 0;
  /** Told of each event stored from a line naming its `sender` (the TCP hub's share). */
  onStored: ((sender: string, bytes: number) => void) | undefined;
  private readonly senders = new WeakMap<SerializedEvent, string>();
  /** Keys of the quarantine's records, read at the first rejected line. */
  private quarantined: Set<string> | undefined;
  private batch: InputLine[] = [];
  private readonly inFlight: Promise<PackedOutcomes>[] = [];
  private pool: IngestPool | undefined;
  private chunks = 0;
  /** Slices written since a whole batch's end (`SLICE_LINES`), and their quarantine records. */
  private slices = 0;
  private sliceQuarantine: QuarantineRecord[] = [];
  /** The journal was fsynced (to compact) since the batch began: its lines count from there. */
  private syncedInBatch = false;
  private storing: Promise<void> = Promise.resolve();
  /** Lines stored by `commit(false)` since the journal's last fsync. */
  private unsyncedLines = 0;
  /** Quarantine records of those lines: written with the fsync, in one append. */
  private heldQuarantine: QuarantineRecord[] = [];
  /** A fsync of the journal running while the next lines are normalized, and the records it holds back. */
  private syncing: { done: Promise<void>; quarantine: QuarantineRecord[] } | undefined;

  constructor(
    private readonly target: IngestTarget,
    private poolFactory?: () => IngestPool | undefined,
  ) {}

  /** Queues a line; `commit()` (or `flush()`) stores what was queued. */
  push(line: InputLine): void {
    if (isBlank(line.text)) return;
    this.batch.push(line);
  }

  /** Lines queued and not yet stored. */
  get pending(): number {
    return this.batch.length;
  }
  get fill(): { events: number; bytes: number } {
    return { events: this.target.buffer.count, bytes: this.target.buffer.totalBytes };
  }

  /** Starts the worker threads now instead of after the first chunks. */
  async startPool(): Promise<void> {
    if (this.pool || !this.poolFactory) return;
    // Without queued lines this runs synchronously: the pool exists when it returns.
    if (this.batch.length > 0) await this.commit();
    this.pool = this.poolFactory();
    this.poolFactory = undefined;
  }

  /**
   * Complete lines of NDJSON text, numbered from `firstLine`; `head`, when given, is one line
   * with its line end that comes before them (read apart, so the chunk is not copied whole).
   */
  async pushChunk(text: string, firstLine: number, source: string, head = ""): Promise<void> {
    this.chunks++;
    if (this.chunks > CHUNKS_BEFORE_POOL) await this.startPool();
    if (!this.pool) {
      const lines = splitLines(text, head === "" ? firstLine : firstLine + 1, source);
      if (head !== "") lines.unshift(...splitLines(head, firstLine, source));
      for (const line of lines) {
        this.push(line);
        if (this.batch.length >= SLICE_LINES) await this.commit(false);
      }
      return;
    }
    this.inFlight.push(this.pool.run(head + text, firstLine, source, receiptTime()));
    while (this.inFlight.length > this.pool.size * 2) {
      await this.apply(await (this.inFlight.shift() as Promise<PackedOutcomes>));
    }
  }

  /**
   * Stores everything queued, within the buffer's hard budgets: an event that would pass
   * them first compacts the oldest slice, as a cycle does. When this returns, every accepted
   * event is durable, unless `durable` is false (a large input's small batches): then the
   * fsync waits until BATCH_LINES lines are written, or for the next durable commit.
   */
  commit(durable = true): Promise<void> {
    // One at a time: a commit that compacts must not have another append under it.
    const run = this.storing.then(async () => {
      if (this.slices === 0) this.syncedInBatch = false;
      this.slices = durable ? 0 : (this.slices + 1) % (WRITE_LINES / SLICE_LINES);
      const taken = await this.takeBatchLoading();
      if (taken) {
        await this.store(taken.events, taken.quarantine, taken.quarantineRedactions, durable);
      }
      if (durable) await this.syncBuffer();
      else if (this.slices === 0) await this.endBatch();
    });
    this.storing = run.catch(() => {});
    return run;
  }

  /**
   * Like `commit`, for a caller that waits only when it must (the TCP hub's group commit):
   * what is queued and fits in the hard budgets is stored at once, and nothing is returned.
   * When the batch would pass a budget, room must be made first (a compaction, as a cycle):
   * the returned promise settles once the whole batch is stored, and the caller reads nothing
   * new until then. Either way the budgets hold when the batch is stored.
   */
  flush(): Promise<void> | undefined {
    if (this.syncing !== undefined) return this.commit();
    const taken = this.takeBatch();
    if (!taken) return undefined;
    if (taken === NEEDS_SCHEMAS) return this.commit();
    const { buffer, room } = this.target;
    if (!room || buffer.fitting(taken.events, 0, room.limits) === taken.events.length) {
      this.storeAll(taken.events, taken.quarantine, taken.quarantineRedactions);
      return undefined;
    }
    const run = this.storing.then(() =>
      this.store(taken.events, taken.quarantine, taken.quarantineRedactions),
    );
    this.storing = run.catch(() => {});
    return run;
  }

  /** Normalizes the queued lines on this thread: no packing, which pays off only between threads. */
  private takeBatch(): TakenBatch | typeof NEEDS_SCHEMAS | undefined {
    if (this.batch.length === 0) return undefined;
    const receivedAt = receiptTime();
    const outcomes = normalizeBatch(this.batch, { ...this.target, receivedAt });
    // The batch stays queued until the schemas are loaded.
    if (outcomes === undefined) return NEEDS_SCHEMAS;
    const lines = this.batch;
    this.batch = [];
    const events: SerializedEvent[] = [];
    const quarantine: QuarantineRecord[] = [];
    let quarantineRedactions = 0;
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.ok) {
        events.push(outcome.event);
        const sender = lines[i]?.sender;
        if (sender !== undefined) this.senders.set(outcome.event, sender);
        this.countRepaired(outcome.repaired);
      } else {
        quarantine.push(outcome.record);
        quarantineRedactions += outcome.redactions;
        if (outcome.note) this.noteLines++;
      }
    }
    return { events, quarantine, quarantineRedactions };
  }

  /** `takeBatch`, loading the zod schemas first when a line needs them. */
  private async takeBatchLoading(): Promise<TakenBatch | undefined> {
    const taken = this.takeBatch();
    if (taken !== NEEDS_SCHEMAS) return taken;
    await loadEnvelopeSchemas();
    return this.takeBatch() as TakenBatch | undefined;
  }

  /** Like `commit`, and waits for the chunks still in worker threads. */
  async drain(): Promise<void> {
    await this.commit();
    while (this.inFlight.length > 0) {
      await this.apply(await (this.inFlight.shift() as Promise<PackedOutcomes>));
    }
    // The threads' chunks were written as small batches: their fsync, and held records.
    await this.syncBuffer();
  }

  /** Longest line worth reading whole: anything longer is over `max_message_bytes` anyway. */
  get maxLineChars(): number {
    return this.target.maxMessageBytes;
  }

  /** Quarantines a line too long to hold, from its start; the caller skips the rest of it. */
  async rejectOversized(
    start: string,
    line: number,
    source: string,
    charsSeen: number,
  ): Promise<void> {
    await this.drain();
    const excerpt = quarantineExcerpt(start, this.target.redactor);
    this.quarantine([
      {
        received_at: receiptTime(),
        source,
        line,
        reason: "oversized",
        detail: `message over the limit agent_bus.max_message_bytes = ${this.target.maxMessageBytes} (no line end in its first ${charsSeen} characters; the rest of the line was skipped)`,
        excerpt: excerpt.text,
        bytes: Buffer.byteLength(start, "utf8"),
        key: quarantineKey(source, line, start),
      },
    ]);
    this.counts.quarantined++;
    this.counts.redacted += excerpt.count;
  }

  async close(): Promise<void> {
    // The journal is closed after this: no fsync may still be running on it. Its failure
    // was already reported by the commit that settled it, or the ingest is failing anyway.
    await this.syncing?.done.catch(() => {});
    this.syncing = undefined;
    await this.pool?.close();
    this.pool = undefined;
  }

  /** Records rejected lines, each line of a source once however often it is read. */
  private quarantine(records: readonly QuarantineRecord[]): void {
    // Those held by small batches go first: the file keeps the input's order.
    const all = this.heldQuarantine.length > 0 ? [...this.heldQuarantine, ...records] : records;
    this.heldQuarantine = [];
    this.writeQuarantine(all);
  }

  private writeQuarantine(all: readonly QuarantineRecord[]): void {
    if (all.length === 0) return;
    this.quarantined ??= quarantineKeys(this.target.quarantinePath);
    appendQuarantine(
      this.target.quarantinePath,
      all,
      this.quarantined,
      this.target.quarantineLimits,
    );
  }

  /** A chunk the threads normalized: stored as a small batch, fsynced as one, as on this thread. */
  private async apply(packed: PackedOutcomes): Promise<void> {
    this.noteLines += packed.noteLines;
    this.countRepaired(packed.repaired);
    this.syncedInBatch = false;
    await this.store(unpackEvents(packed), packed.quarantine, packed.quarantineRedactions, false);
    await this.endBatch();
  }

  /**
   * Appends what fits in the hard budgets, then makes room for the next event and goes on.
   * Where the compactions fall depends only on the events and the buffer, never on how the
   * input was cut into batches: a slice compacted is the same whatever the chunking.
   */
  private async store(
    events: readonly SerializedEvent[],
    quarantine: readonly QuarantineRecord[],
    quarantineRedactions: number,
    durable = true,
  ): Promise<void> {
    const { buffer, room } = this.target;
    // What a background fsync holds back is written before anything durable is counted.
    if (durable) await this.settleSync();
    if (!durable) this.unsyncedLines += events.length;
    if (!room) {
      this.storeAll(events, quarantine, quarantineRedactions, durable);
      return;
    }
    const added: SerializedEvent[] = [];
    let start = 0;
    while (start < events.length) {
      const end = buffer.fitting(events, start, room.limits);
      if (end > start) {
        for (const event of buffer.append(events.slice(start, end), durable)) added.push(event);
      }
      if (end >= events.length) break;
      const next = events[end] as SerializedEvent;
      // A compaction works on durable events only.
      await this.syncBuffer();
      this.syncedInBatch = true;
      await room.make(next);
      if (buffer.fitting(events, end, room.limits) === end) {
        throw new StateError(
          `the buffer cannot make room for event ${next.key} within memory.buffer_max_events (${room.limits.maxEvents}) and memory.buffer_max_bytes (${room.limits.maxBytes}): compaction left ${buffer.count} events, ${buffer.totalBytes} bytes`,
        );
      }
      start = end;
    }
    this.count(events.length, added, quarantine, quarantineRedactions, durable);
  }

  private storeAll(
    events: readonly SerializedEvent[],
    quarantine: readonly QuarantineRecord[],
    quarantineRedactions: number,
    durable = true,
  ): void {
    const added = this.target.buffer.append(events, durable);
    this.count(events.length, added, quarantine, quarantineRedactions, durable);
  }

  /** A whole batch written by small commits: its records held for the fsync, which may start. */
  private async endBatch(): Promise<void> {
    for (const record of this.sliceQuarantine) this.heldQuarantine.push(record);
    this.sliceQuarantine = [];
    // As when a whole batch was stored at once: a compaction's fsync counted all its lines.
    if (this.syncedInBatch) this.unsyncedLines = 0;
    this.syncedInBatch = false;
    if (this.unsyncedLines >= BATCH_LINES) await this.syncInBackground();
  }

  /** Fsyncs the journal, and writes the quarantine records held since the last fsync. */
  private async syncBuffer(): Promise<void> {
    await this.settleSync();
    this.target.buffer.sync();
    this.unsyncedLines = 0;
    this.quarantine([]);
  }

  /**
   * Starts the fsync of what small batches wrote and goes on: the disk works while the next
   * lines are normalized (it was a good share of a large input's time on one thread). At
   * most one runs: the one before is settled first. Nothing is acknowledged before `drain`,
   * whose durable commit settles the last one and fsyncs the rest.
   */
  private async syncInBackground(): Promise<void> {
    await this.settleSync();
    this.syncing = { done: this.target.buffer.syncInBackground(), quarantine: this.heldQuarantine };
    this.heldQuarantine = [];
    this.unsyncedLines = 0;
  }

  /** Waits for the background fsync, then writes the quarantine records it held back. */
  private async settleSync(): Promise<void> {
    const syncing = this.syncing;
    if (syncing === undefined) return;
    this.syncing = undefined;
    await syncing.done;
    this.writeQuarantine(syncing.quarantine);
  }

  private count(
    offered: number,
    added: readonly SerializedEvent[],
    quarantine: readonly QuarantineRecord[],
    quarantineRedactions: number,
    durable = true,
  ): void {
    if (durable) {
      this.quarantine([...this.sliceQuarantine, ...quarantine]);
      this.sliceQuarantine = [];
    } else for (const record of quarantine) this.sliceQuarantine.push(record);
    let redacted = quarantineRedactions;
    for (const event of added) redacted += event.redactions;
    for (const event of this.onStored ? added : []) {
      const sender = this.senders.get(event);
      if (sender !== undefined) this.onStored?.(sender, event.body.length);
    }
    this.counts.accepted += added.length;
    this.counts.duplicates += offered - added.length;
    this.counts.quarantined += quarantine.length;
    this.counts.redacted += redacted;
  }

  /** Lone surrogates replaced by U+FFFD while normalizing (absent from the counts when none). */
  private countRepaired(repaired: number): void {
    if (repaired > 0) {
      this.counts.surrogates_replaced = (this.counts.surrogates_replaced ?? 0) + repaired;
    }
  }
}
