import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type PendingContent,
  parsePending,
  pendingEngrams,
  roomLinker,
} from "../core/compaction/room.js";
import type { RoomLedger } from "../core/compaction/room-ledger.js";
import { StateError } from "../errors.js";
import type { MemoryConfig } from "../schema/config.js";
import type { Registry } from "../schema/registry.js";
import type { StatePaths } from "../state/paths.js";
import { LEDGER, roomDir } from "./room-ledger.js";

/**
 * What this process compacted for room, by pending file and digest: the cycle that takes it
 * in the same process (a settle, or `run --pr` after its drains) reads no file back.
 */
const made = new Map<string, { sha256: string; content: PendingContent }>();

/** Remembers what this process wrote to a pending file, by the file's digest. */
export function rememberPending(path: string, sha256: string, content: PendingContent): void {
  made.set(path, { sha256, content });
}

/**
 * The engrams of what the ledger names as pending (see `pendingEngrams`), each file checked
 * against its digest, linked to `registry`'s entities.
 */
export function loadPendingEngrams(
  paths: StatePaths,
  ledger: RoomLedger,
  memory: MemoryConfig,
  registry: Registry | undefined,
): ReturnType<typeof pendingEngrams> {
  const out: PendingContent[] = [];
  for (const { file, sha256 } of ledger.pending) {
    const path = join(roomDir(paths), file);
    const known = made.get(path);
    if (known !== undefined && known.sha256 === sha256) {
      out.push(known.content);
      continue;
    }
    if (!existsSync(path)) {
      throw new StateError(
        `${path}: missing, though ${join(roomDir(paths), LEDGER)} lists it; restore it, or move ${roomDir(paths)} away to drop what ingests compacted for room`,
      );
    }
    const content = parsePending(readFileSync(path, "utf8"), sha256);
    if (typeof content === "string") {
      throw new StateError(
        `${path}: ${content}; restore it, or move ${roomDir(paths)} away to drop what ingests compacted for room`,
      );
    }
    out.push(content);
  }
  return pendingEngrams(out, memory, roomLinker(registry));
}
