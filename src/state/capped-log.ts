/**
 * Append-only logs kept within a disk bound: a file that would pass its cap is rotated to one
 * earlier generation (`x.ndjson` -> `x.1.ndjson`, the older one replaced), so a log never
 * holds more than two caps. Logs explain; what must survive lives in journals and queues.
 */
import { appendFileSync, renameSync, statSync } from "node:fs";
import { STATE_FILE_MODE } from "./atomic.js";

/** The earlier generation of a log: read with the current one, replaced at the next rotation. */
export function rotatedLogPath(path: string): string {
  return path.replace(/(\.ndjson)?$/, ".1.ndjson");
}

/** The size of a file, 0 when there is none. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Appends `text`, rotating first when the file would pass `maxBytes`. */
export function appendCapped(path: string, text: string, maxBytes: number): void {
  const size = fileSize(path);
  if (size > 0 && size + Buffer.byteLength(text) > maxBytes) renameSync(path, rotatedLogPath(path));
  appendFileSync(path, text, { mode: STATE_FILE_MODE });
}
