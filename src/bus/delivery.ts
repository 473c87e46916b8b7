/**
 * What every transport shares: the delivery a send achieves, the sender interface, and the
 * local spool every networked transport falls back to.
 */

import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { StateError } from "../errors.js";
import type { Envelope } from "../schema/envelope.js";
import { writeSpoolFile } from "../state/spool.js";
import { recordSpoolRefusal, SPOOL_REFUSED_FILE, spoolShareRefusal } from "../state/spool-share.js";
import type { BusUrl } from "./url.js";

/**
 * What a delivery achieved. `spooled: false` means the far end made the envelopes durable
 * (the hub acknowledged them after its journal fsync, JetStream stored them, the ref was
 * pushed); `spooled: true` means they are durable in the local spool, to be delivered later.
 */
export interface Delivery {
  transport: BusUrl["kind"];
  spooled: boolean;
  /** The spool file, when spooled. */
  path?: string;
  /** Why the bus was not used, when a networked transport fell back to the spool. */
  fallback_reason?: string;
  /** Secrets redacted on this worker before the envelopes left it (absent when none). */
  redacted?: number;
  /** The Director's `sync_required.v1` payload, when it told this worker to sync with main. */
  sync_required?: Record<string, unknown>;
  /** Why what was spooled will not reach memory (no Director drains this spool), and what to do. */
  warning?: string;
}

/** One way of getting a worker's envelopes to the Director's durable buffer. */
export interface BusSender {
  /** Resolves once every envelope is durable (see `Delivery`). */
  send(envelopes: readonly Envelope[]): Promise<Delivery>;
  close(): Promise<void>;
}

/** The embedded default: one spool file per send, durable when written (temp, fsync, rename). */
export function spoolSender(ctx: RepoContext): BusSender {
  return {
    async send(envelopes) {
      const lines = envelopes.map((e) => JSON.stringify(e));
      const sender = envelopes[0]?.sender.id;
      if (sender !== undefined) assertSpoolShare(ctx, sender, lines);
      const path = writeSpoolFile(ctx.paths.spool, lines, Date.now(), sender);
      return { transport: "spool", spooled: true, path };
    },
    async close() {},
  };
}

/**
 * Refuses a send that would take its sender past its share of the spool (`[agent_bus]
 * sender_share` of `[memory] buffer_max_bytes`, `spool-share.ts`): nothing is written, the
 * refusal is counted for `director status` and the next drain, and the worker is told what
 * to do. A file counts against the sender of its first envelope.
 */
function assertSpoolShare(ctx: RepoContext, sender: string, lines: readonly string[]): void {
  let bytes = 0;
  for (const line of lines) bytes += Buffer.byteLength(line, "utf8") + 1;
  const share = Math.floor(ctx.config.agent_bus.sender_share * ctx.config.memory.buffer_max_bytes);
  const refusal = spoolShareRefusal(ctx.paths.spool, sender, bytes, share);
  if (refusal === undefined) return;
  recordSpoolRefusal(join(ctx.paths.spoolRoot, SPOOL_REFUSED_FILE), sender, lines.length, bytes);
  throw new StateError(
    `${ctx.paths.spool}: sender ${JSON.stringify(sender)} holds ${refusal.held_bytes} bytes of spool files waiting for a Director, and ${bytes} more would pass its share (${share} bytes: agent_bus.sender_share ${ctx.config.agent_bus.sender_share} of memory.buffer_max_bytes ${ctx.config.memory.buffer_max_bytes}): nothing was written; run director run (or director serve) to drain the spool, or send a large file with director ingest`,
    { code: "spool_share" },
  );
}
