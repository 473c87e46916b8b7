import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { parseLedger, type RoomLedger, serializeLedger } from "../core/compaction/room-ledger.js";
import { StateError } from "../errors.js";
import { fsyncDirSync, writeFileAtomicSync } from "../state/atomic.js";
import type { StatePaths } from "../state/paths.js";

/**
 * The folder (in the state folder) where compactions for room leave their engrams and
 * ledger until a cycle takes them into a memory tree: never the work tree or the index.
 */
export const ROOM_DIR = "room";
export const LEDGER = "ledger.json";

export function roomDir(paths: StatePaths): string {
  return join(paths.root, ROOM_DIR);
}

/** The ledger of compactions for room not yet reported by a run (undefined: none). */
export function readRoomLedger(paths: StatePaths): RoomLedger | undefined {
  const path = join(roomDir(paths), LEDGER);
  if (!existsSync(path)) return undefined;
  const ledger = parseLedger(readFileSync(path, "utf8"));
  if (typeof ledger === "string") {
    throw new StateError(
      `${path}: ${ledger}; it lists the engrams ingests compacted for room that no memory tree holds yet: restore it from a backup, or move ${roomDir(paths)} away to drop them`,
    );
  }
  return ledger;
}

/**
 * The ledger's text after a cycle took its pending engrams: those new to memory count as
 * written, and the engrams its groups' records made (`fromGroups`) as made.
 */
export function settledLedgerText(ledger: RoomLedger, written: number, fromGroups: number): string {
  return serializeLedger({
    ...ledger,
    engrams: ledger.engrams + fromGroups,
    // The groups are packed: the next compaction starts new ones.
    labels: [],
    written_by_ingest: ledger.written_by_ingest + written,
    pending: [],
  });
}

/**
 * Carries out a cycle intent's `room` step, after the memory files are written: `null`
 * removes the room (a run reported it), a text replaces the ledger (a settle) and then the
 * pending files it no longer names. Idempotent, as the rest of an intent.
 */
export function updateRoom(paths: StatePaths, ledger: string | null): void {
  const dir = roomDir(paths);
  if (!existsSync(dir)) return;
  if (ledger === null) {
    rmSync(dir, { recursive: true, force: true });
    fsyncDirSync(paths.root);
    return;
  }
  writeFileAtomicSync(join(dir, LEDGER), ledger);
  const parsed = parseLedger(ledger);
  const kept = new Set(typeof parsed === "string" ? [] : parsed.pending.map((p) => p.file));
  let removed = false;
  for (const name of readdirSync(dir)) {
    if (name.startsWith("pending-") && !kept.has(name)) {
      unlinkSync(join(dir, name));
      removed = true;
    }
  }
  // The ledger's write fsynced the folder already: only a removal needs it again (a
  // compaction for room, dozens of times in one large ingest, removes nothing).
  if (removed) fsyncDirSync(dir);
}
