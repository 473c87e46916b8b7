/**
 * What every transport shares: the delivery a send achieves, the sender interface, and the
 * local spool every networked transport falls back to.
 */
import type { RepoContext } from "../context/repo-context.js";
import type { Envelope } from "../schema/envelope.js";
import { writeSpoolFile } from "../state/spool.js";
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
      const path = writeSpoolFile(
        ctx.paths.spool,
        envelopes.map((e) => JSON.stringify(e)),
        Date.now(),
      );
      return { transport: "spool", spooled: true, path };
    },
    async close() {},
  };
}
