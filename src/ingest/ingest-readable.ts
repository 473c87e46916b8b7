/** Reading a stream or a file into an Ingestor in large chunks cut at line ends. */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";

/** Characters per chunk of a large input: one worker job, one group commit. */
export const CHUNK_CHARS = 1024 * 1024;

/** What reading needs of the `Ingestor` (`ingest.ts`), which imports this module. */
export interface ChunkSink {
  readonly maxLineChars: number;
  pushChunk(text: string, firstLine: number, source: string, head?: string): Promise<void>;
  rejectOversized(start: string, line: number, source: string, charsSeen: number): Promise<void>;
  drain(): Promise<void>;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

/**
 * Reads a stream in large chunks cut at line ends (cheaper than readline, and ready for the
 * worker threads); a final line without a newline is still ingested.
 */
export async function ingestReadable(
  ingestor: ChunkSink,
  input: Readable,
  source: string,
): Promise<void> {
  input.setEncoding("utf8");
  let pending = "";
  // Whether `pending` holds a line end (it then spans reads), not just the start of a line.
  let pendingLines = false;
  let nextLine = 1;
  // A line that never ends is not held in memory: past the limit it is quarantined as
  // oversized and the rest of it is skipped.
  const limit = CHUNK_CHARS + ingestor.maxLineChars;
  let skipping = false;
  for await (const chunk of input as AsyncIterable<string>) {
    let data = chunk;
    if (skipping) {
      const newline = data.indexOf("\n");
      if (newline === -1) continue;
      skipping = false;
      nextLine++;
      data = data.slice(newline + 1);
    }
    const started = pending;
    pending += data;
    if (pending.length < CHUNK_CHARS) {
      pendingLines ||= data.includes("\n");
      continue;
    }
    const last = pendingLines ? -1 : data.lastIndexOf("\n");
    if (last !== -1) {
      // Most reads: the line begun before, then this read's lines as a slice of it. Joined,
      // the two would be copied whole (a megabyte per chunk) to find the last line end.
      const first = data.indexOf("\n");
      const text = data.slice(first + 1, last + 1);
      pending = data.slice(last + 1);
      await ingestor.pushChunk(text, nextLine, source, started + data.slice(0, first + 1));
      nextLine += 1 + countNewlines(text);
      continue;
    }
    const cut = pending.lastIndexOf("\n");
    if (cut === -1) {
      if (pending.length > limit) {
        await ingestor.rejectOversized(pending.slice(0, 4096), nextLine, source, pending.length);
        pending = "";
        skipping = true;
      }
      continue;
    }
    const text = pending.slice(0, cut + 1);
    pending = pending.slice(cut + 1);
    pendingLines = false;
    await ingestor.pushChunk(text, nextLine, source);
    nextLine += countNewlines(text);
  }
  if (pending.length > 0 && !skipping) await ingestor.pushChunk(pending, nextLine, source);
  await ingestor.drain();
}

export async function ingestFile(ingestor: ChunkSink, path: string, source = path): Promise<void> {
  // Reads of a whole chunk: the default 64 KB meant 16 trips to the thread pool per chunk,
  // each a wait on a busy machine.
  const input = createReadStream(path, { encoding: "utf8", highWaterMark: CHUNK_CHARS });
  await ingestReadable(ingestor, input, source);
}
