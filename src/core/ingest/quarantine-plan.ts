/**
 * How the quarantine stays on a disk budget (docs/security.md): two generations, the current
 * file and one rotated out, each at most half of `max_bytes` and of `max_records`; a run of
 * rejected lines alike (same source, reason and detail) is one record with a count, not one
 * record a line; one sender holds at most `sender_share` of a generation. What does not fit is
 * counted as dropped, never silently lost. Pure: the apply side is `src/state/quarantine.ts`.
 */
import type { QuarantineConfig } from "../../schema/quarantine-config.js";

/** `[quarantine]` as the planner needs it. */
export interface QuarantineLimits {
  maxBytes: number;
  maxRecords: number;
  senderShare: number;
}

/** The quarantine's caps when no config is at hand (the `[quarantine]` defaults). */
export const DEFAULT_QUARANTINE_LIMITS: QuarantineLimits = {
  maxBytes: 8 * 1024 * 1024,
  maxRecords: 20_000,
  senderShare: 0.25,
};

/** The fields of a record the planner reads (`QuarantineRecord` has them all). */
export interface PlannedRecord {
  source: string;
  line: number;
  reason: string;
  detail: string;
  bytes: number;
  /** Lines this record stands for (a run of alike lines); absent: one. */
  count?: number;
  /** The last line of the run, when `count` > 1. */
  last_line?: number;
}

/** What the current generation holds. */
export interface GenerationState {
  bytes: number;
  records: number;
  /** Records and record bytes per sender (`senderOf`). */
  bySender: Map<string, { records: number; bytes: number }>;
}

/** Lines and bytes of input that the quarantine did not keep. */
export interface DropCount {
  lines: number;
  bytes: number;
  bySender: Map<string, { lines: number; bytes: number }>;
}

export interface AppendPlan<R> {
  /** Written in turn; the generation is rotated before every segment but the first. */
  segments: { records: R[]; text: string }[];
  /** Records refused by the sender share or by a record too large for a generation. */
  dropped: DropCount;
  /** The current generation after the plan is applied. */
  after: GenerationState;
}

export function emptyGeneration(): GenerationState {
  return { bytes: 0, records: 0, bySender: new Map() };
}

export function emptyDrops(): DropCount {
  return { lines: 0, bytes: 0, bySender: new Map() };
}

/**
 * Who sent a line, for the share: a TCP connection's remote address without its port (a
 * sender names itself in the hello, so its own id proves nothing, and every new connection
 * has a new port), otherwise the source (a file, a spool file, a bus source).
 */
export function senderOf(source: string): string {
  const tcp = /^tcp\/(?:.*@)?(\[[^\]]*\]|[^:@]*)(?::\d+)?$/.exec(source);
  return tcp ? `tcp/${tcp[1]}` : source;
}

export function linesOf(record: PlannedRecord): number {
  return record.count ?? 1;
}

/**
 * Records of consecutive lines of the same source, reason and detail become one: the first
 * (its line, excerpt and key) with `count`, `last_line` and the bytes of all, so the record
 * says "lines a to b". 200,000 lines of `x` are a few records, not 200,000.
 */
export function coalesceRuns<R extends PlannedRecord>(records: readonly R[]): R[] {
  const out: R[] = [];
  for (const record of records) {
    const last = out[out.length - 1];
    if (
      last !== undefined &&
      last.source === record.source &&
      last.reason === record.reason &&
      last.detail === record.detail &&
      record.line === (last.last_line ?? last.line) + 1
    ) {
      const count = linesOf(last) + linesOf(record);
      out[out.length - 1] = {
        ...last,
        count,
        last_line: record.last_line ?? record.line,
        bytes: last.bytes + record.bytes,
      };
    } else {
      out.push(record);
    }
  }
  return out;
}

export function addDrop(drops: DropCount, sender: string, lines: number, bytes: number): void {
  drops.lines += lines;
  drops.bytes += bytes;
  const had = drops.bySender.get(sender) ?? { lines: 0, bytes: 0 };
  drops.bySender.set(sender, { lines: had.lines + lines, bytes: had.bytes + bytes });
}

/**
 * Where each record goes: into the current generation while it has room, into a new one
 * (after a rotation) when it has not; dropped when its sender already holds its share of the
 * generation, or when it alone is larger than a generation. `encode` is the record's line
 * without its newline.
 */
export function planQuarantineAppend<R extends PlannedRecord>(
  before: GenerationState,
  records: readonly R[],
  limits: QuarantineLimits,
  encode: (record: R) => string,
): AppendPlan<R> {
  const genBytes = Math.max(1, Math.floor(limits.maxBytes / 2));
  const genRecords = Math.max(1, Math.floor(limits.maxRecords / 2));
  const shareRecords = Math.max(1, Math.floor(genRecords * limits.senderShare));
  const shareBytes = Math.max(1, Math.floor(genBytes * limits.senderShare));
  const state: GenerationState = {
    bytes: before.bytes,
    records: before.records,
    bySender: new Map(before.bySender),
  };
  const dropped = emptyDrops();
  const segments: AppendPlan<R>["segments"] = [{ records: [], text: "" }];
  for (const record of records) {
    const sender = senderOf(record.source);
    const line = `${encode(record)}\n`;
    const size = Buffer.byteLength(line, "utf8");
    const fits = () => state.bytes + size <= genBytes && state.records + 1 <= genRecords;
    if (size > genBytes) {
      addDrop(dropped, sender, linesOf(record), record.bytes);
      continue;
    }
    if (!fits()) {
      segments.push({ records: [], text: "" });
      state.bytes = 0;
      state.records = 0;
      state.bySender.clear();
    }
    const held = state.bySender.get(sender) ?? { records: 0, bytes: 0 };
    if (held.records + 1 > shareRecords || held.bytes + size > shareBytes) {
      addDrop(dropped, sender, linesOf(record), record.bytes);
      continue;
    }
    const segment = segments[segments.length - 1] as AppendPlan<R>["segments"][number];
    segment.records.push(record);
    segment.text += line;
    state.bytes += size;
    state.records++;
    state.bySender.set(sender, { records: held.records + 1, bytes: held.bytes + size });
  }
  return { segments, dropped, after: state };
}

/** The planner's limits from `[quarantine]` (a type-only import: no schema code loads). */
export function quarantineLimits(config: QuarantineConfig): QuarantineLimits {
  return {
    maxBytes: config.max_bytes,
    maxRecords: config.max_records,
    senderShare: config.sender_share,
  };
}
