import { jetstreamManager } from "@nats-io/jetstream";
import { createInbox, headers, type NatsConnection } from "@nats-io/transport-node";
import type { RepoContext } from "../director/context.js";
import type { Envelope } from "../schema/envelope.js";
import { type BusSender, type Delivery, spoolSender } from "./delivery.js";
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
        return { ...(await spool.send(envelopes)), transport: "nats", fallback_reason: reason };
      },
      async close() {},
    };
  }
  const publisher = new PipelinedPublisher(nc, settings);
  let streamChecked = false;
  return {
    async send(envelopes) {
      let failed = await publisher.publishAll(envelopes);
      if (failed.length > 0 && !streamChecked && failed.every((f) => isNoStream(f.error))) {
        // No stream takes our subjects yet: create it once, then try again.
        streamChecked = true;
        try {
          await ensureStream(await jetstreamManager(nc), settings);
          failed = await publisher.publishAll(failed.map((f) => f.envelope));
        } catch (err) {
          failed = failed.map((f) => ({ ...f, error: err }));
        }
      }
      if (failed.length === 0) return { transport: "nats", spooled: false };
      const first = failed[0] as Failure;
      const delivery: Delivery = await spool.send(failed.map((f) => f.envelope));
      return {
        ...delivery,
        transport: "nats",
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

/** What JetStream answers a publish with. */
interface PubAckReply {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; description?: string };
}

class NoStreamError extends Error {
  override readonly name = "JetStreamNotEnabled";
}

/**
 * JetStream publishes with pipelined acks: every envelope goes out at once, each with its own
 * reply subject under one inbox subscription, and one timer bounds the whole batch. (The
 * request API would build a timer, a promise race and an Error with a stack per message,
 * which costs more than the publish.)
 */
class PipelinedPublisher {
  private readonly inbox = createInbox();
  /** Publishes awaiting their ack, by the number that ends their reply subject. */
  private readonly waiting = new Map<number, { batch: Batch; envelope: Envelope }>();
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: NatsSettings,
  ) {
    nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) {
          for (const token of [...this.waiting.keys()]) this.settle(token, err);
          return;
        }
        const token = Number(msg.subject.slice(this.inbox.length + 1));
        this.settle(token, ackError(msg.headers?.code, msg.data));
      },
    });
  }

  /** The envelopes JetStream did not acknowledge as stored, each with why. */
  publishAll(envelopes: readonly Envelope[]): Promise<Failure[]> {
    if (envelopes.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const first = this.next;
      const timer = setTimeout(() => {
        const late = new Error(`no ack within ${this.settings.publishTimeoutMs} ms`);
        for (let token = first; token < first + envelopes.length; token++) {
          this.settle(token, late);
        }
      }, this.settings.publishTimeoutMs);
      const batch: Batch = {
        remaining: envelopes.length,
        failed: [],
        done: (failed) => {
          clearTimeout(timer);
          resolve(failed);
        },
      };
      for (const envelope of envelopes) {
        const token = this.next++;
        this.waiting.set(token, { batch, envelope });
        const h = headers();
        // Without an event id there is nothing to deduplicate by: JetStream stores each send.
        if (envelope.event_id !== undefined) h.set("Nats-Msg-Id", envelope.event_id);
        try {
          this.nc.publish(subjectFor(this.settings, envelope.sender.id), JSON.stringify(envelope), {
            reply: `${this.inbox}.${token}`,
            headers: h,
          });
        } catch (err) {
          this.settle(token, err);
        }
      }
    });
  }

  /** Records one publish's outcome (the first one counts: a late ack after a timeout is ignored). */
  private settle(token: number, error: unknown): void {
    const pending = this.waiting.get(token);
    if (pending === undefined) return;
    this.waiting.delete(token);
    const { batch, envelope } = pending;
    if (error !== undefined) batch.failed.push({ envelope, error });
    if (--batch.remaining === 0) batch.done(batch.failed);
  }
}

interface Batch {
  remaining: number;
  failed: Failure[];
  done: (failed: Failure[]) => void;
}

/** Undefined when the reply says "stored" (or "already stored": a duplicate); else the error. */
function ackError(status: number | undefined, data: Uint8Array): Error | undefined {
  if (status === 503) return new NoStreamError("no stream takes this subject");
  let reply: PubAckReply;
  try {
    reply = JSON.parse(new TextDecoder().decode(data)) as PubAckReply;
  } catch {
    return new Error(`unreadable publish ack${status ? ` (status ${status})` : ""}`);
  }
  if (reply.error !== undefined) {
    return new Error(
      `JetStream: ${reply.error.description ?? "error"} (${reply.error.code ?? "?"})`,
    );
  }
  if (typeof reply.stream !== "string" || typeof reply.seq !== "number") {
    return new Error("publish ack without a stream and sequence");
  }
  return undefined;
}
