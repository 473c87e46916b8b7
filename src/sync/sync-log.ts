import { appendFileSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { STATE_DIR_MODE, STATE_FILE_MODE } from "../state/atomic.js";

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

const FILE = /^sync-(\d{4}-W\d{2})\.ndjson$/;

/**
 * The sync log: `.engram/sync/log/sync-<ISO week>.ndjson`, one JSON object per operation.
 * A new week starts a new file; files beyond `keepWeeks` are removed. Appends are not
 * fsynced: the log explains, the queue is what must survive a crash.
 */
export class SyncLog {
  private rotated = false;
  constructor(
    readonly dir: string,
    private readonly keepWeeks: number,
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
    for (const [week, text] of byWeek)
      appendFileSync(join(this.dir, `sync-${week}.ndjson`), text, { mode: STATE_FILE_MODE });
    if (!this.rotated) {
      this.rotated = true;
      this.prune();
    }
  }

  private weeks(): string[] {
    try {
      return readdirSync(this.dir)
        .flatMap((name) => FILE.exec(name)?.[1] ?? [])
        .sort();
    } catch {
      return [];
    }
  }

  private prune(): void {
    const weeks = this.weeks();
    for (const week of weeks.slice(0, Math.max(0, weeks.length - this.keepWeeks))) {
      unlinkSync(join(this.dir, `sync-${week}.ndjson`));
    }
  }

  /** Every entry kept, oldest week first; a torn line (a crash mid-append) is skipped. */
  read(): SyncLogEntry[] {
    const out: SyncLogEntry[] = [];
    for (const week of this.weeks()) {
      for (const line of readFileSync(join(this.dir, `sync-${week}.ndjson`), "utf8").split("\n")) {
        if (line.trim() === "") continue;
        try {
          out.push(JSON.parse(line) as SyncLogEntry);
        } catch {}
      }
    }
    return out;
  }
}
