import { Readable } from "node:stream";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { confirmationOf } from "../graph/import-proposals.js";
import type { IngestCounts } from "../ingest/ingest.js";
import { ingestSource } from "./ingest.js";

export interface ConfirmResult extends IngestCounts {
  confirmed: { id: string; sha: string; title: string }[];
}

/**
 * `director confirm ID...`: each proposed decision named becomes a decision note of the
 * history (`git:<sha>:decision`, as the import would have written it), ingested now and
 * compacted by the next `director run`. Confirming one twice is a duplicate, not a second
 * decision. An id that names no open proposal, or several, is a usage error naming it.
 */
export async function confirmProposals(
  ctx: RepoContext,
  ids: readonly string[],
): Promise<ConfirmResult> {
  const { confirmed, envelopes } = await confirmationOf(ctx, ids, receiptTime());
  const { noteLines: _n, ...counts } = await ingestSource(ctx, {
    stream: Readable.from([envelopes.map((e) => `${JSON.stringify(e)}\n`).join("")]),
    name: "confirm",
  });
  return { confirmed, ...counts };
}
