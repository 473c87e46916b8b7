import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parsePending } from "../core/compaction/room.js";
import type { RoomLedger } from "../core/compaction/room-ledger.js";
import { StateError } from "../errors.js";
import type { Engram } from "../schema/engram.js";
import type { StatePaths } from "../state/paths.js";
import { LEDGER, roomDir } from "./room-ledger.js";

/**
 * Engrams this process compacted for room, by pending file and digest: the cycle that takes
 * them in the same process (a settle, or `run --pr` after its drains) reads no file back.
 */
const made = new Map<string, { sha256: string; engrams: Engram[] }>();

/** Remembers the engrams this process wrote to a pending file, by the file's digest. */
export function rememberPending(path: string, sha256: string, engrams: Engram[]): void {
  made.set(path, { sha256, engrams });
}

/** The engrams the ledger names as pending, oldest first, each file checked against its digest. */
export function loadPendingEngrams(paths: StatePaths, ledger: RoomLedger): Engram[] {
  const out: Engram[] = [];
  for (const { file, sha256 } of ledger.pending) {
    const path = join(roomDir(paths), file);
    const known = made.get(path);
    if (known !== undefined && known.sha256 === sha256) {
      out.push(...known.engrams);
      continue;
    }
    if (!existsSync(path)) {
      throw new StateError(
        `${path}: missing, though ${join(roomDir(paths), LEDGER)} lists it; restore it, or move ${roomDir(paths)} away to drop what ingests compacted for room`,
      );
    }
    const engrams = parsePending(readFileSync(path, "utf8"), sha256);
    if (typeof engrams === "string") {
      throw new StateError(
        `${path}: ${engrams}; restore it, or move ${roomDir(paths)} away to drop what ingests compacted for room`,
      );
    }
    out.push(...engrams);
  }
  return out;
}
