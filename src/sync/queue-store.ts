import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import {
  emptyQueue,
  type MappingEntry,
  type QueueRecord,
  type TargetQueue,
} from "../core/sync/queue.js";
import { StateError } from "../errors.js";
import {
  removeStaleTemps,
  STATE_DIR_MODE,
  STATE_FILE_MODE,
  writeFileAtomicSync,
} from "../state/atomic.js";
import { appendCapped } from "../state/capped-log.js";

/** What the last health check said about a target, kept for `sync status`. */
export interface TargetStatus {
  state: "active" | "paused" | "disabled" | "unreachable";
  reason: string | null;
  since: string;
  checks: number;
  healthy_checks: number;
  last_check_at: string | null;
  last_latency_ms: number | null;
  /**
   * The store's last Retry-After, as a wall-clock time (Retry-After is real time, not the
   * Director's clock): the next run, in another process, sends nothing before it.
   */
  hold_until?: string | null;
}

export interface StoredQueue extends TargetQueue {
  status: TargetStatus | null;
  /** The memory (catalog hash) the last enqueue read: the same again has nothing new. */
  source_hash: string | null;
}

/** One journal line: the new state of the records it names (null = removed), and the rest. */
interface JournalLine {
  records?: Record<string, QueueRecord | null>;
  mapping?: Record<string, MappingEntry>;
  approvals?: TargetQueue["approvals"];
  last_batch_at?: string | null;
  status?: TargetStatus | null;
  source_hash?: string | null;
}

const SNAPSHOT_VERSION = 1;
/** The archive of failed records keeps two generations of this size. */
const ARCHIVE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The queue and id mapping of one target in `.engram/sync/<target>/`: a snapshot
 * (`queue.json`, written atomically) and a journal (`queue.journal.ndjson`, one fsynced line
 * per change). Every line carries whole records, so replaying the journal over the snapshot
 * is idempotent: a crash between writing a new snapshot and emptying the journal is harmless,
 * and a torn last line (a crash mid-append) is the only one ignored.
 */
export class QueueStore {
  readonly dir: string;
  private readonly snapshotPath: string;
  private readonly journalPath: string;
  private lines = 0;

  constructor(syncDir: string, target: string) {
    this.dir = join(syncDir, target);
    this.snapshotPath = join(this.dir, "queue.json");
    this.journalPath = join(this.dir, "queue.journal.ndjson");
  }

  load(): StoredQueue {
    mkdirSync(this.dir, { recursive: true, mode: STATE_DIR_MODE });
    removeStaleTemps([this.dir]);
    const { queue, torn } = this.read();
    // Fold at once, so the next append does not follow the torn line.
    if (torn) this.compact(queue);
    return queue;
  }

  /**
   * The queue as it stands, for a reader that does not hold the sync lock (hybrid recall):
   * nothing is written, a torn last line is skipped and left for the next run to fold.
   */
  peek(): StoredQueue {
    return this.read().queue;
  }

  private read(): { queue: StoredQueue; torn: boolean } {
    let queue: StoredQueue = { ...emptyQueue(), status: null, source_hash: null };
    if (existsSync(this.snapshotPath)) {
      const json = parseJson(readFileSync(this.snapshotPath, "utf8"), this.snapshotPath);
      if (json.version !== SNAPSHOT_VERSION) {
        throw new StateError(`${this.snapshotPath}: version ${String(json.version)} not known`);
      }
      queue = {
        records: json.records ?? {},
        mapping: json.mapping ?? {},
        approvals: json.approvals ?? {},
        last_batch_at: json.last_batch_at ?? null,
        status: json.status ?? null,
        source_hash: json.source_hash ?? null,
      };
    }
    this.lines = 0;
    if (!existsSync(this.journalPath)) return { queue, torn: false };
    const text = readFileSync(this.journalPath, "utf8");
    const rows = text.split("\n");
    let torn = false;
    for (const [i, row] of rows.entries()) {
      if (row.trim() === "") continue;
      let line: JournalLine;
      try {
        line = JSON.parse(row) as JournalLine;
      } catch (error) {
        // Only the last line can be torn by a crash; anything else is damage.
        if (i >= rows.length - 2) {
          torn = true;
          break;
        }
        throw new StateError(`${this.journalPath}:${i + 1}: not valid JSON`, { cause: error });
      }
      queue = replay(queue, line);
      this.lines++;
    }
    return { queue, torn };
  }

  /** Appends the change from `before` to `after` for the keys named, and fsyncs it. */
  commit(after: StoredQueue, keys: Iterable<string>, removed: Iterable<string> = []): void {
    const line: JournalLine = {
      records: {},
      mapping: {},
      approvals: {},
      last_batch_at: after.last_batch_at,
      status: after.status,
      source_hash: after.source_hash,
    };
    for (const key of keys) {
      const record = after.records[key];
      if (record !== undefined) (line.records as Record<string, QueueRecord | null>)[key] = record;
      const mapped = after.mapping[key];
      if (mapped !== undefined) (line.mapping as Record<string, MappingEntry>)[key] = mapped;
      const approval = after.approvals[key];
      if (approval !== undefined) (line.approvals as TargetQueue["approvals"])[key] = approval;
    }
    for (const key of removed) (line.records as Record<string, QueueRecord | null>)[key] = null;
    mkdirSync(this.dir, { recursive: true, mode: STATE_DIR_MODE });
    const fd = openSync(this.journalPath, "a", STATE_FILE_MODE);
    try {
      writeSync(fd, `${JSON.stringify(line)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.lines++;
  }

  /**
   * Folds the journal into the snapshot once it is long: rewriting a large snapshot on every
   * run would cost more than replaying a few hundred lines.
   */
  maybeCompact(queue: StoredQueue, minLines = 256): void {
    if (this.lines >= minLines) this.compact(queue);
  }

  /** Folds the journal into a new snapshot (atomic), then empties the journal. */
  compact(queue: StoredQueue): void {
    mkdirSync(this.dir, { recursive: true, mode: STATE_DIR_MODE });
    writeFileAtomicSync(
      this.snapshotPath,
      `${JSON.stringify({ version: SNAPSHOT_VERSION, ...queue })}\n`,
    );
    if (this.lines > 0 || existsSync(this.journalPath)) {
      writeFileAtomicSync(this.journalPath, "");
    }
    this.lines = 0;
  }

  /**
   * Failed records past retention, kept one JSON object per line, within two generations of
   * `ARCHIVE_MAX_BYTES` (`archive.1.ndjson` holds the earlier one).
   */
  archive(records: readonly QueueRecord[]): void {
    if (records.length === 0) return;
    mkdirSync(this.dir, { recursive: true, mode: STATE_DIR_MODE });
    appendCapped(
      join(this.dir, "archive.ndjson"),
      records.map((r) => `${JSON.stringify(r)}\n`).join(""),
      ARCHIVE_MAX_BYTES,
    );
  }

  get journalLines(): number {
    return this.lines;
  }
}

function replay(queue: StoredQueue, line: JournalLine): StoredQueue {
  const records = { ...queue.records };
  for (const [key, record] of Object.entries(line.records ?? {})) {
    if (record === null) delete records[key];
    else records[key] = record;
  }
  return {
    records,
    mapping: { ...queue.mapping, ...line.mapping },
    approvals: { ...queue.approvals, ...line.approvals },
    last_batch_at: line.last_batch_at !== undefined ? line.last_batch_at : queue.last_batch_at,
    status: line.status !== undefined ? line.status : queue.status,
    source_hash: line.source_hash !== undefined ? line.source_hash : queue.source_hash,
  };
}

function parseJson(text: string, path: string): Partial<StoredQueue> & { version?: unknown } {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StateError(`${path}: not valid JSON; remove it to start the queue again`, {
      cause: error,
    });
  }
}
