import { statSync } from "node:fs";
import type { Readable } from "node:stream";
import type { RepoContext } from "../context/repo-context.js";
import type { RoomReport } from "../core/compaction/room-ledger.js";
import { roomReport } from "../core/compaction/room-ledger.js";
import {
  type IngestCounts,
  ingestFile,
  ingestorFor,
  ingestReadable,
  LARGE_FILE_BYTES,
} from "../ingest/ingest.js";
import { withDirectorState } from "./director-state.js";
import { readRoomLedger } from "./room-ledger.js";

/**
 * `director ingest FILE|-`: the whole source into the buffer as the one writer, in fsynced
 * batches. The buffer is opened without its events: ingest needs only their keys.
 */
export async function ingestSource(
  ctx: RepoContext,
  source: { path: string; name?: string } | { stream: Readable; name: string },
): Promise<
  IngestCounts & {
    buffer: { events: number; bytes: number };
    noteLines: number;
    /** Absent when no compaction for room waits to be reported. */
    compacted_for_room?: RoomReport;
  }
> {
  const counts = await withDirectorState(
    ctx,
    async (buffer) => {
      const largeInput = "path" in source && statSync(source.path).size > LARGE_FILE_BYTES;
      const ingestor = ingestorFor(ctx, buffer, { parallel: true, largeInput });
      try {
        if ("path" in source) await ingestFile(ingestor, source.path, source.name);
        else await ingestReadable(ingestor, source.stream, source.name);
      } finally {
        await ingestor.close();
      }
      const buffered = { events: buffer.count, bytes: buffer.totalBytes };
      return { ...ingestor.counts, buffer: buffered, noteLines: ingestor.noteLines };
    },
    { retainEvents: false },
  );
  // What this ingest and those before it compacted for room, since the last run reported it.
  const ledger = readRoomLedger(ctx.paths);
  return ledger === undefined ? counts : { ...counts, compacted_for_room: roomReport(ledger) };
}
