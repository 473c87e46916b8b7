import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { RepoContext } from "../director/context.js";
import type { Envelope } from "../schema/envelope.js";
import {
  connectNats,
  describeNatsError,
  ensureStream,
  isNoStream,
  type NatsSettings,
  type NatsUrl,
  natsSettings,
  subjectFor,
} from "./nats-stream.js";
import { type BusSender, type Delivery, spoolSender } from "./sender.js";
import { formatBusUrl } from "./url.js";

/**
 * The worker side of NATS JetStream: each envelope is published to `PREFIX.<worker-id>` with
 * its `event_id` as the message id, so a resend inside the stream's duplicate window is
 * stored once. `send` resolves when JetStream acknowledged every publish (stored); whatever
 * it did not acknowledge (server down, timeout) goes to the local spool instead, so a
 * delivery is always durable somewhere. The Director deduplicates by event id either way.
 */
export async function openNatsSender(ctx: RepoContext, url: NatsUrl): Promise<BusSender> {
  const settings = natsSettings(ctx.config.agent_bus.nats);
  const spool = spoolSender(ctx);
  let nc: NatsConnection;
  try {
    nc = await connectNats(url, settings, "engram-worker");
  } catch (err) {
    const reason = `${formatBusUrl(url)}: cannot connect: ${describeNatsError(err)}`;
    return {
      async send(envelopes) {
        return { ...(await spool.send(envelopes)), fallback_reason: reason };
      },
      async close() {},
    };
  }
  const js = jetstream(nc, { timeout: settings.publishTimeoutMs });
  let streamChecked = false;
  return {
    async send(envelopes) {
      let failed = await publishAll(js, settings, envelopes);
      if (failed.length > 0 && !streamChecked && failed.every((f) => isNoStream(f.error))) {
        // No stream takes our subjects yet: create it once, then try again.
        streamChecked = true;
        try {
          await ensureStream(await jetstreamManager(nc), settings);
          failed = await publishAll(
            js,
            settings,
            failed.map((f) => f.envelope),
          );
        } catch (err) {
          failed = failed.map((f) => ({ ...f, error: err }));
        }
      }
      if (failed.length === 0) return { transport: "nats", spooled: false };
      const first = failed[0] as Failure;
      const delivery: Delivery = await spool.send(failed.map((f) => f.envelope));
      return {
        ...delivery,
        fallback_reason: `${formatBusUrl(url)}: ${failed.length} of ${envelopes.length} not stored by JetStream: ${describeNatsError(first.error)}`,
      };
    },
    async close() {
      if (!nc.isClosed()) await nc.close();
    },
  };
}

interface Failure {
  envelope: Envelope;
  error: unknown;
}

/** Publishes every envelope at once (acks are pipelined) and returns those not acknowledged. */
async function publishAll(
  js: JetStreamClient,
  settings: NatsSettings,
  envelopes: readonly Envelope[],
): Promise<Failure[]> {
  const results = await Promise.allSettled(
    envelopes.map((envelope) =>
      js.publish(subjectFor(settings, envelope.sender.id), JSON.stringify(envelope), {
        // Without an event id there is nothing to deduplicate by: JetStream stores each send.
        ...(envelope.event_id !== undefined ? { msgID: envelope.event_id } : {}),
      }),
    ),
  );
  const failed: Failure[] = [];
  results.forEach((result, i) => {
    if (result.status === "rejected") {
      failed.push({ envelope: envelopes[i] as Envelope, error: result.reason });
    }
  });
  return failed;
}
