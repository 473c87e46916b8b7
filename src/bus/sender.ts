import type { RepoContext } from "../director/context.js";
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
  /** The Director's `sync_required.v1` payload, when it told this worker to sync with main. */
  sync_required?: Record<string, unknown>;
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

/** Opens the sender for a bus URL; networked transports are loaded only when asked for. */
export async function openSender(ctx: RepoContext, url: BusUrl): Promise<BusSender> {
  switch (url.kind) {
    case "spool":
      return spoolSender(ctx);
    case "tcp":
      return (await import("./tcp-client.js")).tcpSender(ctx, url);
    case "nats":
      return (await import("./nats.js")).openNatsSender(ctx, url);
    case "git": {
      const { gitRefSender } = await import("./git-ref.js");
      return gitRefSender(ctx, url.remote);
    }
  }
}
