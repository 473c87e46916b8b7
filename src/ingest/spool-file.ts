import { closeSync, createReadStream, readFileSync } from "node:fs";
import { openSpoolFile } from "../state/spool.js";
import {
  BATCH_LINES,
  CHUNK_CHARS,
  type Ingestor,
  ingestReadable,
  LARGE_FILE_BYTES,
} from "./ingest.js";

/**
 * Ingests one spool file: a small one (a worker's note) is read whole, faster than a stream
 * per file; a large one is streamed like `director ingest` streams its input. Opened without
 * following a link or blocking on a FIFO: false, nothing read, when it is not a regular file.
 */
export async function ingestSpoolFile(
  ingestor: Ingestor,
  path: string,
  source: string,
): Promise<boolean> {
  const opened = openSpoolFile(path);
  if (opened === undefined) return false;
  if (opened.bytes > LARGE_FILE_BYTES) {
    const input = createReadStream("", {
      fd: opened.fd,
      encoding: "utf8",
      highWaterMark: CHUNK_CHARS,
    });
    try {
      await ingestReadable(ingestor, input, source);
    } finally {
      // Closes the descriptor when the ingest stopped before the stream's end.
      input.destroy();
    }
    return true;
  }
  let text: string;
  try {
    text = readFileSync(opened.fd, "utf8");
  } finally {
    closeSync(opened.fd);
  }
  let n = 0;
  for (const line of text.split("\n")) {
    n++;
    ingestor.push({ text: line, source, line: n });
  }
  if (ingestor.pending >= BATCH_LINES) await ingestor.commit();
  return true;
}
