import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { CacheEntry } from "../core/sync/remote-recall.js";
import { STATE_DIR_MODE, writeFileAtomicSync } from "../state/atomic.js";

const VERSION = 1;
/** Most entries kept; the oldest fetched go first. Queries are short, so this stays small. */
const MAX_ENTRIES = 500;

interface CacheFile {
  version: number;
  entries: Record<string, CacheEntry>;
}

/**
 * Remote recall answers, `.engram/sync/recall-cache.json`: one entry per target and query,
 * written atomically. Two writers at once (a recall and a background validation) may lose one
 * entry to the other, never damage the file: it is a cache, the next recall asks again.
 */
export class RecallCache {
  constructor(readonly path: string) {}

  read(): Record<string, CacheEntry> {
    if (!existsSync(this.path)) return {};
    try {
      const file = JSON.parse(readFileSync(this.path, "utf8")) as CacheFile;
      return file.version === VERSION && file.entries !== null && typeof file.entries === "object"
        ? file.entries
        : {};
    } catch {
      // A damaged cache is an empty one.
      return {};
    }
  }

  get(key: string): CacheEntry | undefined {
    return this.read()[key];
  }

  /** Stores entries (replacing those with the same key) and drops the keys in `remove`. */
  update(put: Record<string, CacheEntry>, remove: readonly string[] = []): void {
    const entries = { ...this.read(), ...put };
    for (const key of remove) delete entries[key];
    const keys = Object.keys(entries).sort((a, b) => {
      const x = entries[a]?.fetched_at ?? "";
      const y = entries[b]?.fetched_at ?? "";
      return x < y ? 1 : x > y ? -1 : a < b ? -1 : 1;
    });
    const kept: Record<string, CacheEntry> = {};
    for (const key of keys.slice(0, MAX_ENTRIES)) kept[key] = entries[key] as CacheEntry;
    mkdirSync(dirname(this.path), { recursive: true, mode: STATE_DIR_MODE });
    writeFileAtomicSync(this.path, `${JSON.stringify({ version: VERSION, entries: kept })}\n`);
  }
}
