/**
 * The cycle's first step, kept apart from its planning in cycle.ts: what workers left in the
 * local spool, drained into the buffer through the Ingestor (`bus/sources.ts` drains the
 * networked sources).
 */
import { basename, join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { type IngestCounts, zeroCounts } from "../ingest/counts.js";
import type { EventBuffer } from "../state/buffer.js";
import { loadSealKey } from "../state/seal-key.js";
import {
  listSpoolFiles,
  removeSpoolFiles,
  type SpoolOddity,
  setAsideOddSpoolEntries,
} from "../state/spool.js";
import { SPOOL_REFUSED_FILE, type SpoolRefusals, takeSpoolRefusals } from "../state/spool-share.js";

/**
 * Drains the local spool into the buffer; files are removed only after the journal fsync.
 * Entries named like spool files that are not regular files are moved aside first and
 * reported (`set_aside`): a FIFO or a link from a restored state folder never stops a drain.
 */
export async function drainSpool(ctx: RepoContext, buffer: EventBuffer): Promise<SpoolDrain> {
  const setAside = setAsideOddSpoolEntries(ctx.paths.spool);
  for (const odd of setAside) {
    process.stderr.write(
      `engram: ${join(ctx.paths.spool, odd.name)}: a ${odd.kind}, not a spool file: never read; ${odd.moved_to === null ? "left where it is" : `moved to ${join(ctx.paths.spool, odd.moved_to)}`}\n`,
    );
  }
  const refused = reportSpoolRefusals(ctx);
  const files = listSpoolFiles(ctx.paths.spool);
  if (files.length === 0) {
    // Nothing to read: the ingest machinery and its schemas stay unloaded. The seal key is
    // still checked (and made on a first run), as an ingest would.
    loadSealKey(ctx.paths.sealKey, true);
    return { ...zeroCounts(), files: 0, set_aside: setAside, ...refused };
  }
  const [{ ingestorFor }, { ingestSpoolFile }] = await Promise.all([
    import("../ingest/ingest.js"),
    import("../ingest/spool-file.js"),
  ]);
  const ingestor = ingestorFor(ctx, buffer);
  const read: string[] = [];
  for (const file of files) {
    if (await ingestSpoolFile(ingestor, file, `spool/${basename(file)}`)) read.push(file);
  }
  await ingestor.commit();
  removeSpoolFiles(ctx.paths.spool, read);
  return { ...ingestor.counts, files: read.length, set_aside: setAside, ...refused };
}

/**
 * The sends refused since the last drain because their sender held its share of the spool
 * (`spool-share.ts`): said on stderr, one line a sender, and taken (counted once).
 */
function reportSpoolRefusals(ctx: RepoContext): { refused?: Record<string, SpoolRefusals> } {
  const refused = takeSpoolRefusals(join(ctx.paths.spoolRoot, SPOOL_REFUSED_FILE));
  const senders = Object.entries(refused);
  if (senders.length === 0) return {};
  for (const [sender, c] of senders) {
    process.stderr.write(
      `engram: spool: sender ${JSON.stringify(sender)} was refused ${c.sends} send(s) (${c.lines} line(s), ${c.bytes} bytes): its files held its share (agent_bus.sender_share of memory.buffer_max_bytes)\n`,
    );
  }
  return { refused };
}

/**
 * What a spool drain did: its counts, the files it read, the entries it moved aside, and the
 * sends refused by sender since the last drain (absent when none).
 */
export type SpoolDrain = IngestCounts & {
  files: number;
  set_aside: SpoolOddity[];
  refused?: Record<string, SpoolRefusals>;
};
