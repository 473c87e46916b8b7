import { existsSync, truncateSync } from "node:fs";
import { currentKey } from "../core/ingest/event-keys.js";
import { writeFileAtomicSync } from "./atomic.js";
import { readStateText } from "./state-file-check.js";

/**
 * The keys of the events already compacted (`buffer/seen.keys`, one a line, oldest first),
 * for deduplication. A key cut short by a crash mid-append is not a key: it is dropped (and
 * cut off the file, so the next append does not glue onto it). Raw event ids from an older
 * version are read as today's keys, and leave the file now, not at the next rewrite.
 */
export function readSeenKeys(path: string, readOnly: boolean): string[] {
  if (!existsSync(path)) return [];
  const text = readStateText(path);
  const whole = text.slice(0, text.lastIndexOf("\n") + 1);
  if (whole.length < text.length && !readOnly) {
    truncateSync(path, Buffer.byteLength(whole, "utf8"));
  }
  const keys: string[] = [];
  let migrated = false;
  for (const line of whole.split("\n")) {
    if (line.length > 0) {
      const key = currentKey(line);
      migrated ||= key !== line;
      keys.push(key);
    }
  }
  if (migrated && !readOnly) writeFileAtomicSync(path, `${keys.join("\n")}\n`);
  return keys;
}
