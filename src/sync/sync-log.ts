import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { STATE_DIR_MODE } from "../state/atomic.js";
import { appendCapped, rotatedLogPath } from "../state/capped-log.js";

/** One line of the sync log: what happened, never the content that was sent. */
export interface SyncLogEntry {
  at: string;
  target: string;
  /** `recall`: one remote ask of hybrid recall (`ok`: it found something). */
  op:
    | "enqueue"
    | "health"
    | "send"
    | "retention"
    | "approve"
    | "reject"
    | "retry"
    | "notice"
    | "recall";
  key?: string;
  ok?: boolean;
  error?: string;
  /** Trigger (queued) to completion, on the Director's clock. */
  latency_ms?: number;
  surprise?: boolean;
  detail?: Record<string, unknown>;
}

/** `2026-W05`: the ISO week of a UTC time, so the log rotates weekly. */
export function isoWeek(iso: string): string {
  const d = new Date(iso);
  const day = (d.getUTCDay() + 6) % 7;
  const thursday = new Date(
    Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3),
  );
  const yearStart = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - yearStart) / 604_800_000) + 1;
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, "0")}`;
}

const FILE = /^sync-(\d{4}-W\d{2})(\.1)?\.ndjson$/;

/**
 * A week's file past this size is rotated to `sync-<week>.1.ndjson` (the older one removed):
 * a flood of operations (recalls, retries) keeps the log within two files a week.
 */
export const SYNC_LOG_FILE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The sync log: `.engram/sync/log/sync-<ISO week>.ndjson`, one JSON object per operation.
 * A new week starts a new file; files beyond `keepWeeks` are removed; a week's file past
 * `maxFileBytes` keeps one earlier generation. Appends are not fsynced: the log explains,
 * the queue is what must survive a crash.
 */
export class SyncLog {
  private rotated = false;
  constructor(
    readonly dir: string,
    private readonly keepWeeks: number,
    private readonly maxFileBytes = SYNC_LOG_FILE_MAX_BYTES,
  ) {}

  /**
   * A create of unknown outcome whose key the store does not show yet waits (the 60 s rule)
   * rather than being sent again: said once per run and key.
   */
  deferred(at: string, target: string, key: string, lastError: string | null | undefined): void {
    this.append({
      at,
      target,
      op: "send",
      key,
      ok: false,
      error: lastError ?? "deferred",
      detail: { deferred: true },
    });
  }

  append(entries: SyncLogEntry | readonly SyncLogEntry[]): void {
    const list = Array.isArray(entries) ? entries : [entries as SyncLogEntry];
    if (list.length === 0) return;
    mkdirSync(this.dir, { recursive: true, mode: STATE_DIR_MODE });
    const byWeek = new Map<string, string>();
    for (const entry of list) {
      const week = isoWeek(entry.at);
      byWeek.set(week, `${byWeek.get(week) ?? ""}${JSON.stringify(entry)}\n`);
    }
    for (const [week, text] of byWeek) appendCapped(this.fileOf(week), text, this.maxFileBytes);
    if (!this.rotated) {
      this.rotated = true;
      this.prune();
    }
  }

  private fileOf(week: string, generation?: 1): string {
    const path = join(this.dir, `sync-${week}.ndjson`);
    return generation ? rotatedLogPath(path) : path;
  }

  private weeks(): string[] {
    try {
      const names = readdirSync(this.dir).flatMap((name) => FILE.exec(name)?.[1] ?? []);
      return [...new Set(names)].sort();
    } catch {
      return [];
    }
  }

  private prune(): void {
    const weeks = this.weeks();
    for (const week of weeks.slice(0, Math.max(0, weeks.length - this.keepWeeks))) {
      for (const path of [this.fileOf(week, 1), this.fileOf(week)]) {
        try {
          unlinkSync(path);
        } catch {}
      }
    }
  }

  /** Every entry kept, oldest week first; a torn line (a crash mid-append) is skipped. */
  read(): SyncLogEntry[] {
    const out: SyncLogEntry[] = [];
    const texts = this.weeks().flatMap((week) =>
      [this.fileOf(week, 1), this.fileOf(week)].flatMap((path) => {
        try {
          return [readFileSync(path, "utf8")];
        } catch {
          return [];
        }
      }),
    );
    for (const text of texts) {
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        try {
          out.push(JSON.parse(line) as SyncLogEntry);
        } catch {}
      }
    }
    return out;
  }
}
