/**
 * The ledger of compactions for room (see `room.ts`): what they made since the last run
 * reported it, and which of their engrams no memory tree holds yet. Light on purpose: every
 * cycle reads it, and an idle one must not load the compaction engine.
 */

/**
 * What the compactions for room made since the last cycle reported them. `pending` names the
 * files (in the state folder) of engrams no memory tree holds yet, each with its digest; `written_by_ingest`
 * counts those a settle (end of an ingest, work-tree publishing) already wrote to the tree.
 */
export interface RoomLedger {
  compactions: number;
  events: number;
  /** Engrams made: of history events at once, of groups when a cycle packs their records. */
  engrams: number;
  /** Group records the compactions left (each group's records become its engrams together). */
  groups: number;
  /**
   * The events each pending group label holds so far, by label: the next compaction keeps
   * the same groups (see `sliceGroups`). Not reported.
   */
  labels: [string, number][];
  written_by_ingest: number;
  pending: PendingFile[];
}

/** One compaction's engrams: the file's name and the SHA-256 (hex) of its bytes. */
export interface PendingFile {
  file: string;
  sha256: string;
}

/** What `director run --json` reports as `compacted_for_room`. */
export type RoomReport = Omit<RoomLedger, "pending" | "labels">;

export function emptyLedger(): RoomLedger {
  return {
    compactions: 0,
    events: 0,
    engrams: 0,
    groups: 0,
    labels: [],
    written_by_ingest: 0,
    pending: [],
  };
}

export function roomReport(ledger: RoomLedger): RoomReport {
  const { pending: _, labels: __, ...report } = ledger;
  return report;
}

/** Name of the pending file of the ledger's next compaction (sorted by name = in order). */
export function pendingFileName(ledger: RoomLedger): string {
  return `pending-${String(ledger.compactions + 1).padStart(8, "0")}.ndjson`;
}

export function serializeLedger(ledger: RoomLedger): string {
  return `${JSON.stringify(ledger)}\n`;
}

/**
 * Reads the ledger's text; the state folder is input like any other, so anything but a
 * well-formed ledger naming pending files by their own pattern is refused with the reason.
 */
export function parseLedger(text: string): RoomLedger | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${(error as Error).message})`;
  }
  if (typeof value !== "object" || value === null) return "not an object";
  const v = value as Record<string, unknown>;
  const counts = ["compactions", "events", "engrams", "written_by_ingest"] as const;
  for (const key of counts) {
    if (!Number.isSafeInteger(v[key]) || (v[key] as number) < 0) {
      return `${key}: expected a non-negative integer`;
    }
  }
  const pending = v.pending;
  if (!Array.isArray(pending) || !pending.every(isPendingFile)) {
    return "pending: expected [{file: pending-NNNNNNNN.ndjson, sha256: 64 hex digits}]";
  }
  // A ledger written before group records existed has no `groups`.
  const groups = v.groups ?? 0;
  if (!Number.isSafeInteger(groups) || (groups as number) < 0) {
    return "groups: expected a non-negative integer";
  }
  // Nor `labels`: the next compaction then ranks groups by its own slice alone.
  const labels = v.labels ?? [];
  if (!Array.isArray(labels) || !labels.every(isLabelCount)) {
    return "labels: expected [[label, events], ...]";
  }
  return {
    compactions: v.compactions as number,
    events: v.events as number,
    engrams: v.engrams as number,
    groups: groups as number,
    labels: labels.map(([label, n]: [string, number]) => [label, n] as [string, number]),
    written_by_ingest: v.written_by_ingest as number,
    pending: pending.map((p: PendingFile) => ({ file: p.file, sha256: p.sha256 })),
  };
}

function isLabelCount(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === "string" &&
    Number.isSafeInteger(value[1]) &&
    value[1] > 0
  );
}

function isPendingFile(value: unknown): value is PendingFile {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    typeof p.file === "string" &&
    PENDING.test(p.file) &&
    typeof p.sha256 === "string" &&
    /^[0-9a-f]{64}$/.test(p.sha256)
  );
}

const PENDING = /^pending-\d{8}\.ndjson$/;
