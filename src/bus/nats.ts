import { createHash } from "node:crypto";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import {
  createInbox,
  headers,
  type MsgHdrs,
  type NatsConnection,
  PermissionViolationError,
} from "@nats-io/transport-node";
import type { RepoContext } from "../context/repo-context.js";
import { ServiceError, UsageError } from "../errors.js";
import type { Envelope } from "../schema/envelope.js";
import { type BusSender, type Delivery, spoolSender } from "./delivery.js";
import { NATS_CREDENTIAL_HINT, natsCredentialFromEnv } from "./nats-credentials.js";
import {
  connectNats,
  describeNatsError,
  ensureStream,
  type NatsSettings,
  type NatsUrl,
  natsSettings,
  type Pause,
  pause,
  RACE_PAUSES_MS,
  subjectFor,
} from "./nats-stream.js";
import { formatBusUrl } from "./url.js";

/**
 * The worker side of NATS JetStream: a send is published to `PREFIX.<worker-id>` as one
 * message of NDJSON envelopes (more only where it would exceed the server's payload limit
 * or holds several workers' envelopes), keyed by its event ids (see `messageIdOf`), so a resend inside the stream's duplicate
 * window is stored once. `send` resolves when JetStream acknowledged every message (stored);
 * whatever it did not acknowledge (server down, timeout) goes to the local spool instead, so
 * a delivery is always durable somewhere. The Director deduplicates by event id either way.
 */
export interface NatsSenderOptions {
  /** How the sender waits before publishing again to a stream not yet taking its subjects. */
  wait?: Pause;
}

export async function openNatsSender(
  ctx: RepoContext,
  url: NatsUrl,
  options: NatsSenderOptions = {},
): Promise<BusSender> {
  const settings = natsSettings(ctx.config.agent_bus.nats);
  const spool = spoolSender(ctx);
  const credential = await natsCredentialFromEnv();
  let nc: NatsConnection;
  try {
    nc = await connectNats(url, settings, "engram-worker", credential);
  } catch (err) {
    // A server that refuses this client's credential refuses it tomorrow too: no spool.
    const name = (err as { name?: unknown } | null)?.name;
    if (name === "AuthorizationError" || name === "UserAuthenticationExpiredError") {
      const which = credential
        ? `the credential of ${credential.from}`
        : `the credential (none was given: set ${NATS_CREDENTIAL_HINT})`;
      throw new UsageError(
        `${formatBusUrl(url)}: the server refused ${which}: ${describeNatsError(err)}; nothing was sent or spooled`,
      );
    }
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
      if (!streamChecked && failed.some((f) => f.error instanceof NoStreamError)) {
        // Once per sender: a stream that never takes our subjects costs one round of waits.
        streamChecked = true;
        failed = await publishWhenStreamTakes(nc, publisher, settings, failed, options.wait);
      }
      if (failed.length === 0) return { transport: "nats", spooled: false };
      const denied = failed.filter((f) => f.error instanceof PermissionViolationError);
      if (denied.length > 0) {
        // Refused tomorrow too: a spooled note would wait for a publish that never succeeds.
        const rest = failed.filter((f) => !(f.error instanceof PermissionViolationError));
        if (rest.length > 0) await spool.send(rest.map((f) => f.envelope));
        const spooled =
          rest.length > 0 ? `; ${rest.length} spooled (not stored for another reason)` : "";
        throw new UsageError(
          `${formatBusUrl(url)}: the server denied ${credential ? `the credential of ${credential.from}` : "this connection"} a permission: ${describeNatsError((denied[0] as Failure).error)}; ${denied.length} of ${envelopes.length} envelope(s) were not sent or spooled${spooled}. Grant it publish on ${settings.subjectPrefix}.> (and the JetStream API), or use another credential`,
        );
      }
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

/**
 * Publishes again what no stream took (503): the stream is looked up (and created when
 * missing, see `ensureStream`) before each new attempt, with `RACE_PAUSES_MS` between them.
 * Fifty workers starting at once against a server without the stream race to create it, and
 * a server can answer a lookup or a create with "it exists" a moment before the stream takes
 * its subjects (nats-server 2.9 registers the name before it subscribes): a publish in that
 * moment is refused as if there were no stream. Bounded: still refused after the last pause,
 * the envelopes go to the spool, with the stream's subjects in the reason.
 */
async function publishWhenStreamTakes(
  nc: NatsConnection,
  publisher: PipelinedPublisher,
  settings: NatsSettings,
  failed: readonly Failure[],
  wait: Pause = pause,
): Promise<Failure[]> {
  const outcome = new Map<Envelope, unknown>(failed.map((f) => [f.envelope, f.error]));
  let refused = failed.filter((f) => f.error instanceof NoStreamError).map((f) => f.envelope);
  let takes = "";
  let attempts = 0;
  let jsm: JetStreamManager | undefined;
  for (let attempt = 0; refused.length > 0; attempt++) {
    if (attempt > 0) {
      const delay = RACE_PAUSES_MS[attempt - 1];
      if (delay === undefined) break;
      await wait(delay);
    }
    try {
      jsm ??= await jetstreamManager(nc);
      const stream = await ensureStream(jsm, settings, wait);
      takes = (stream.config.subjects ?? []).join(", ");
    } catch (err) {
      // No JetStream, or a stream that cannot be made: no use trying again.
      for (const envelope of refused) outcome.set(envelope, err);
      break;
    }
    attempts++;
    const again = await publisher.publishAll(refused);
    for (const envelope of refused) outcome.set(envelope, undefined);
    for (const f of again) outcome.set(f.envelope, f.error);
    refused = again.filter((f) => f.error instanceof NoStreamError).map((f) => f.envelope);
  }
  for (const envelope of refused) {
    if (!(outcome.get(envelope) instanceof NoStreamError)) continue;
    const subject = subjectFor(settings, envelope.sender.id);
    outcome.set(
      envelope,
      new NoStreamError(
        `no stream took ${subject} in ${attempts + 1} publishes (stream ${settings.stream} has subjects ${takes || "none"}); its subjects must include ${settings.subjectPrefix}.>, or name another stream in [agent_bus.nats] stream`,
      ),
    );
  }
  return failed.flatMap((f) => {
    const error = outcome.get(f.envelope);
    return error === undefined ? [] : [{ envelope: f.envelope, error }];
  });
}

/** What JetStream answers a publish with. */
interface PubAckReply {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; description?: string };
}

/** A publish JetStream did not acknowledge as stored (caught: the envelope goes to the spool). */
class PublishError extends ServiceError {
  constructor(message: string) {
    super(message, "bus");
  }
}

/** A publish no stream took: the server's 503 "no responders" to a JetStream publish. */
class NoStreamError extends PublishError {}

/**
 * JetStream publishes with pipelined acks: every message goes out at once, each with its own
 * reply subject under one inbox subscription, and one timer bounds the whole send. (The
 * request API would build a timer, a promise race and an Error with a stack per message,
 * which costs more than the publish.)
 */
class PipelinedPublisher {
  private readonly inbox = createInbox();
  /** Messages awaiting their ack, by the number that ends their reply subject. */
  private readonly waiting = new Map<
    number,
    { batch: Batch; envelopes: readonly Envelope[]; subject: string }
  >();
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
    void this.watchDenials();
  }

  /**
   * A publish the server denies gets no answer, only an error on the connection's status:
   * each message waiting on that subject fails with it at once (instead of timing out and
   * being spooled as if the server were slow).
   */
  private async watchDenials(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type !== "error") continue;
      const error = status.error;
      if (!(error instanceof PermissionViolationError) || error.operation !== "publish") continue;
      for (const [token, pending] of [...this.waiting]) {
        if (pending.subject === error.subject) this.settle(token, error);
      }
    }
  }

  /** The envelopes JetStream did not acknowledge as stored, each with why. */
  publishAll(envelopes: readonly Envelope[]): Promise<Failure[]> {
    if (envelopes.length === 0) return Promise.resolve([]);
    const messages = packMessages(envelopes, payloadLimit(this.nc), (e) =>
      subjectFor(this.settings, e.sender.id),
    );
    return new Promise((resolve) => {
      const first = this.next;
      const timer = setTimeout(() => {
        const late = new PublishError(`no ack within ${this.settings.publishTimeoutMs} ms`);
        for (let token = first; token < first + messages.length; token++) {
          this.settle(token, late);
        }
      }, this.settings.publishTimeoutMs);
      const batch: Batch = {
        remaining: messages.length,
        failed: [],
        done: (failed) => {
          clearTimeout(timer);
          resolve(failed);
        },
      };
      for (const message of messages) {
        const token = this.next++;
        this.waiting.set(token, {
          batch,
          envelopes: message.envelopes,
          subject: message.subject,
        });
        const options: { reply: string; headers?: MsgHdrs } = { reply: `${this.inbox}.${token}` };
        const id = messageIdOf(message.envelopes);
        // Without event ids there is nothing to deduplicate by: JetStream stores each send.
        if (id !== undefined) {
          options.headers = headers();
          options.headers.set("Nats-Msg-Id", id);
        }
        try {
          this.nc.publish(message.subject, message.data, options);
        } catch (err) {
          this.settle(token, err);
        }
      }
    });
  }

  /** Records one message's outcome (the first one counts: a late ack after a timeout is ignored). */
  private settle(token: number, error: unknown): void {
    const pending = this.waiting.get(token);
    if (pending === undefined) return;
    this.waiting.delete(token);
    const { batch, envelopes } = pending;
    if (error !== undefined) {
      for (const envelope of envelopes) batch.failed.push({ envelope, error });
    }
    if (--batch.remaining === 0) batch.done(batch.failed);
  }
}

/** Room left in a message for its headers and protocol line. */
const HEADER_ROOM = 1024;

/** The largest message data the server takes (its `max_payload`, 1 MB by default). */
function payloadLimit(nc: NatsConnection): number {
  const max = nc.info?.max_payload ?? 1024 * 1024;
  return Math.max(1, max - HEADER_ROOM);
}

export interface PackedMessage {
  subject: string;
  envelopes: readonly Envelope[];
  /** The envelopes' JSON, one per line. */
  data: string;
}

/**
 * The messages a send becomes: envelopes in order, as many per message as fit `limit` bytes
 * and share a subject (at least one: an envelope larger than the limit goes alone and the
 * server refuses it). One message per send is what makes NATS cheap per event: the server
 * stores, deduplicates, delivers and takes an ack once per message, not once per envelope.
 */
export function packMessages(
  envelopes: readonly Envelope[],
  limit: number,
  subjectOf: (envelope: Envelope) => string,
): PackedMessage[] {
  const out: PackedMessage[] = [];
  let subject = "";
  let group: Envelope[] = [];
  let lines: string[] = [];
  let bytes = 0;
  const close = (): void => {
    if (group.length > 0) out.push({ subject, envelopes: group, data: lines.join("\n") });
    group = [];
    lines = [];
    bytes = 0;
  };
  for (const envelope of envelopes) {
    const line = JSON.stringify(envelope);
    const size = Buffer.byteLength(line, "utf8") + 1;
    const to = subjectOf(envelope);
    if (to !== subject || bytes + size > limit) close();
    subject = to;
    group.push(envelope);
    lines.push(line);
    bytes += size;
  }
  close();
  return out;
}

/**
 * A message's `Nats-Msg-Id`: the event id of a lone envelope; for several, a digest of their
 * event ids in order, so the same send again is the same message. Undefined when an envelope
 * has no event id (nothing stable to key by).
 */
export function messageIdOf(envelopes: readonly Envelope[]): string | undefined {
  if (envelopes.length === 1) return envelopes[0]?.event_id;
  const hash = createHash("sha256");
  for (const envelope of envelopes) {
    if (envelope.event_id === undefined) return undefined;
    // Length-prefixed, so no two lists of ids hash the same input.
    hash.update(`${envelope.event_id.length}:${envelope.event_id}`);
  }
  return `batch-${hash.digest("hex")}`;
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
    return new PublishError(`unreadable publish ack${status ? ` (status ${status})` : ""}`);
  }
  if (reply.error !== undefined) {
    return new PublishError(
      `JetStream: ${reply.error.description ?? "error"} (${reply.error.code ?? "?"})`,
    );
  }
  if (typeof reply.stream !== "string" || typeof reply.seq !== "number") {
    return new PublishError("publish ack without a stream and sequence");
  }
  return undefined;
}
