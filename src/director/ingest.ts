import { createReadStream, readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { receiptTime } from "../clock.js";
import type { Redactor } from "../core/redact.js";
import type { EventBuffer, SerializedEvent } from "../state/buffer.js";
import { appendQuarantine, type QuarantineRecord } from "../state/quarantine.js";
import { loadSealKey } from "../state/seal-key.js";
import { type RepoContext, redactorFor } from "./context.js";
import { withDirectorState } from "./director-state.js";
import { type InputLine, normalizeBatch } from "./normalize-batch.js";

export interface IngestCounts {
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
}

export function zeroCounts(): IngestCounts {
  return { accepted: 0, duplicates: 0, quarantined: 0, redacted: 0 };
}

export function addCounts(into: IngestCounts, more: IngestCounts): IngestCounts {
  into.accepted += more.accepted;
  into.duplicates += more.duplicates;
  into.quarantined += more.quarantined;
  into.redacted += more.redacted;
  return into;
}

export interface IngestTarget {
  buffer: EventBuffer;
  quarantinePath: string;
  redactor: Redactor;
  sealKey: Uint8Array | undefined;
  maxMessageBytes: number;
}

/** The Ingestor every Director path uses: the repository's redaction rules, seal key and size limit. */
export function ingestorFor(ctx: RepoContext, buffer: EventBuffer): Ingestor {
  return new Ingestor({
    buffer,
    quarantinePath: ctx.paths.quarantine,
    redactor: redactorFor(ctx.config),
    sealKey: loadSealKey(ctx.paths.sealKey, true),
    maxMessageBytes: ctx.config.agent_bus.max_message_bytes,
  });
}

/** Lines per group commit: one journal write and one fsync for each batch. */
const BATCH_LINES = 4096;

export type { InputLine };

/**
 * Normalizes and stores lines in batches. Counts come back only for batches whose journal
 * write was fsynced: "accepted" means durable. Bad lines go to the quarantine with their
 * source, line number and reason; nothing stops the batch.
 */
export class Ingestor {
  readonly counts = zeroCounts();
  private batch: InputLine[] = [];

  constructor(private readonly target: IngestTarget) {}

  push(line: InputLine): void {
    if (isBlank(line.text)) return;
    this.batch.push(line);
    if (this.batch.length >= BATCH_LINES) this.flush();
  }

  /** Applies everything pushed so far; when it returns, every accepted event is durable. */
  flush(): void {
    if (this.batch.length === 0) return;
    const outcomes = normalizeBatch(this.batch, { ...this.target, receivedAt: receiptTime() });
    this.batch = [];
    const events: SerializedEvent[] = [];
    const quarantine: QuarantineRecord[] = [];
    let redacted = 0;
    for (const outcome of outcomes) {
      if (outcome.ok) {
        events.push(outcome.event);
      } else {
        quarantine.push(outcome.record);
        redacted += outcome.redactions;
      }
    }
    const added = this.target.buffer.append(events);
    appendQuarantine(this.target.quarantinePath, quarantine);
    for (const event of added) redacted += event.redactions;
    this.counts.accepted += added.length;
    this.counts.duplicates += events.length - added.length;
    this.counts.quarantined += quarantine.length;
    this.counts.redacted += redacted;
  }
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/**
 * Splits a stream into lines by hand: several times cheaper than readline for large inputs,
 * and a final line without a newline is still ingested.
 */
export async function ingestReadable(
  ingestor: Ingestor,
  input: Readable,
  source: string,
): Promise<void> {
  input.setEncoding("utf8");
  let carry = "";
  let n = 0;
  for await (const chunk of input as AsyncIterable<string>) {
    const text = carry.length > 0 ? carry + chunk : chunk;
    let start = 0;
    for (;;) {
      const newline = text.indexOf("\n", start);
      if (newline === -1) break;
      n++;
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      ingestor.push({ text: text.slice(start, end), source, line: n });
      start = newline + 1;
    }
    carry = text.slice(start);
  }
  if (carry.length > 0) ingestor.push({ text: carry, source, line: n + 1 });
  ingestor.flush();
}

export async function ingestFile(ingestor: Ingestor, path: string, source = path): Promise<void> {
  await ingestReadable(ingestor, createReadStream(path, { encoding: "utf8" }), source);
}

/** Small files (spool entries) are read whole: faster than a stream per file. */
export function ingestSmallFile(ingestor: Ingestor, path: string, source: string): void {
  const lines = readFileSync(path, "utf8").split("\n");
  let n = 0;
  for (const text of lines) {
    n++;
    ingestor.push({ text, source, line: n });
  }
}

/**
 * `director ingest FILE|-`: the whole source into the buffer as the one writer, in fsynced
 * batches. The buffer is opened without its events: ingest needs only their keys.
 */
export async function ingestSource(
  ctx: RepoContext,
  source: { path: string; name?: string } | { stream: Readable; name: string },
): Promise<IngestCounts & { buffer: { events: number; bytes: number } }> {
  return withDirectorState(
    ctx,
    async (buffer) => {
      const ingestor = ingestorFor(ctx, buffer);
      if ("path" in source) await ingestFile(ingestor, source.path, source.name);
      else await ingestReadable(ingestor, source.stream, source.name);
      return { ...ingestor.counts, buffer: { events: buffer.count, bytes: buffer.totalBytes } };
    },
    { retainEvents: false },
  );
}
