import type { RepoContext } from "../context/repo-context.js";
import { createRedactor } from "../core/ingest/redact.js";
import { type BusSender, spoolSender } from "./delivery.js";
import { redactEnvelopes } from "./redact-envelopes.js";
import type { BusUrl } from "./url.js";

export type { BusSender, Delivery } from "./delivery.js";

/**
 * Opens the sender for a bus URL; networked transports are loaded only when asked for.
 * Every envelope is redacted here, before any transport writes it (the spool, a fallback
 * spool file, the hub, NATS, a git ref): the Director redacts again for other writers.
 */
export async function openSender(ctx: RepoContext, url: BusUrl): Promise<BusSender> {
  const inner = await openTransport(ctx, url);
  const redactor = createRedactor(ctx.config.redaction.patterns);
  return {
    async send(envelopes) {
      const clean = redactEnvelopes(envelopes, redactor);
      const delivery = await inner.send(clean.envelopes);
      if (clean.redacted === 0) return delivery;
      return { ...delivery, redacted: (delivery.redacted ?? 0) + clean.redacted };
    },
    close: () => inner.close(),
  };
}

async function openTransport(ctx: RepoContext, url: BusUrl): Promise<BusSender> {
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
