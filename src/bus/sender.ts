import type { RepoContext } from "../context/repo-context.js";
import { type BusSender, spoolSender } from "./delivery.js";
import type { BusUrl } from "./url.js";

export type { BusSender, Delivery } from "./delivery.js";

/** Opens the sender for a bus URL; networked transports are loaded only when asked for. */
export async function openSender(ctx: RepoContext, url: BusUrl): Promise<BusSender> {
  switch (url.kind) {
    case "spool":
      return spoolSender(ctx);
    case "tcp":
      return (await import("./tcp-sender.js")).tcpSender(ctx, url);
    case "nats":
      return (await import("./nats.js")).openNatsSender(ctx, url);
    case "git": {
      const { gitRefSender } = await import("./git-ref.js");
      return gitRefSender(ctx, url.remote);
    }
  }
}
