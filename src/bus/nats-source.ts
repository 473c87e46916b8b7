import { performance } from "node:perf_hooks";
import { type ConsumerMessages, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { EngramError, fileSystemError, ServiceError } from "../errors.js";
import type { SourceDrain } from "../ingest/ingest.js";
import { ingestorFor } from "../ingest/ingest.js";
import { splitLines } from "../ingest/normalize-batch.js";
import type { EventBuffer } from "../state/buffer.js";
import { natsCredentialForSource } from "./nats-credentials.js";
import {
  connectNats,
  describeNatsError,
  droppedBeforeDelivery,
  ensureConsumer,
  ensureStream,
  type NatsUrl,
  natsSettings,
} from "./nats-stream.js";
import { formatBusUrl } from "./url.js";

export interface NatsDrainOptions {
  /** While this signal has not aborted the drain keeps waiting for messages (a long-lived consumer). */
  until?: AbortSignal;
  /** Quiet time after which the drain asks the server whether anything is left. */
  idleMs?: number;
  /** Named by the user (`--bus`), not by the repository's config: given the NATS credential. */
  userChosen?: boolean;
}

const DEFAULT_IDLE_MS = 250;
/** Bytes of messages asked for per pull (at least twice the server's largest message). */
const PULL_BYTES = 8 * 1024 * 1024;
/** Shortest time between two group commits of a busy drain. */
const COMMIT_INTERVAL_MS = 5;

/**
 * Drains the Director's durable pull consumer into the buffer through the same Ingestor as
 * every other path. Messages are taken as they arrive and committed in groups: whatever has
 * arrived is normalized, appended and fsynced, and only then acknowledged. A crash before the
 * acks means JetStream delivers those messages again after the ack wait, and the buffer's
 * event-id deduplication stores them once: delivery at least once, ingest exactly once.
 *
 * Returns when nothing is pending: no message waiting and none delivered but unacknowledged
 * (those of a Director killed mid-drain come back after the ack wait, so the drain waits up
 * to that long for them, then leaves any still out for the next drain).
 */
export async function drainNats(
  ctx: RepoContext,
  buffer: EventBuffer,
  url: NatsUrl,
  options: NatsDrainOptions = {},
): Promise<SourceDrain> {
  const settings = natsSettings(ctx.config.agent_bus.nats);
  const source = formatBusUrl(url);
  const { credential, withheld } = await natsCredentialForSource(
    trustOf(ctx),
    new URL(source),
    options.userChosen === true,
  );
  let nc: NatsConnection;
  try {
    nc = await connectNats(url, settings, "engram-director", credential);
  } catch (err) {
    const why = withheld === undefined ? "" : `; ${withheld}`;
    throw new ServiceError(
      `${source}: cannot connect: ${describeNatsError(err)}${why} (nothing was drained; the messages wait in JetStream)`,
      "bus",
      { cause: err },
    );
  }
  const ingestor = ingestorFor(ctx, buffer);
  let acknowledged = 0;
  let dropped = 0;
  try {
    const jsm = await jetstreamManager(nc);
    const stream = await ensureStream(jsm, settings);
    dropped = droppedBeforeDelivery(settings, stream, await ensureConsumer(jsm, settings));
    const consumer = await jetstream(nc).consumers.get(settings.stream, settings.consumer);
    // Pulled by bytes, so the messages waiting in this process stay bounded whatever their
    // size (a message of a big send is up to the server's max_payload).
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
    const pullBytes = Math.max(PULL_BYTES, 2 * maxPayload);
    const messages = await consumer.consume({ max_bytes: pullBytes });
    let uncommitted: JsMsg[] = [];
    let uncommittedBytes = 0;
    // A group is committed at once when it reaches fetch_batch messages or a pull's bytes:
    // what is held in memory before its fsync stays bounded too.
    const groupFull = (): boolean =>
      uncommitted.length >= settings.fetchBatch || uncommittedBytes >= pullBytes;
    let lastArrival = Date.now();
    let finished = false;

    // Group commit: messages are normalized as they come and made durable together, at most
    // once per COMMIT_INTERVAL_MS, so a busy drain fsyncs large groups, and a quiet one
    // commits a lone message at once.
    let lastCommit = Number.NEGATIVE_INFINITY;
    let timer: NodeJS.Timeout | undefined;
    let commitError: unknown;
    // Commits run one after another (the Ingestor queues them): a commit that must first
    // compact to stay within the buffer's budgets makes the next one wait.
    const commit = async (): Promise<void> => {
      clearTimeout(timer);
      timer = undefined;
      if (uncommitted.length === 0) return;
      const group = uncommitted;
      uncommitted = [];
      uncommittedBytes = 0;
      await ingestor.commit();
      // Only now, with the journal fsynced, may JetStream forget them.
      for (const m of group) m.ack();
      acknowledged += group.length;
      lastCommit = performance.now();
    };
    const commitLater = (wait: number): void => {
      timer ??= setTimeout(
        () => {
          commit().catch((err: unknown) => {
            commitError = err;
            messages.stop();
          });
        },
        Math.max(0, wait),
      );
    };
    const commitSoon = async (): Promise<void> => {
      const wait = lastCommit + COMMIT_INTERVAL_MS - performance.now();
      if (wait <= 0 || groupFull()) {
        await commit();
        return;
      }
      commitLater(wait);
    };

    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    const watcher = stopWhenDrained(messages, {
      idleMs,
      giveUpAt: Date.now() + settings.ackWaitMs + 4 * idleMs + 1000,
      lastArrival: () => lastArrival,
      finished: () => finished,
      pending: async () => {
        const info = await consumer.info();
        return { waiting: info.num_pending, unacknowledged: info.num_ack_pending };
      },
      until: options.until,
    });
    try {
      for await (const m of messages) {
        lastArrival = Date.now();
        // A message holds one send: NDJSON envelopes, numbered within the message.
        for (const line of splitLines(m.string(), 1, `${source}/${m.subject}#${m.seq}`)) {
          ingestor.push(line);
        }
        uncommitted.push(m);
        uncommittedBytes += m.data.length;
        // Nothing more has arrived yet (or the group is full): time to think of a commit.
        if (messages.getPending() === 0 || groupFull()) {
          await commitSoon();
        } else {
          // More is said to be waiting, but the iterator's count can stay above 0 after one of
          // its own pull requests went through it (@nats-io/nats-core 3.x): the timer makes
          // sure the last message of a batch is committed and acknowledged all the same.
          commitLater(lastCommit + COMMIT_INTERVAL_MS - performance.now());
        }
      }
      if (commitError !== undefined) throw commitError;
      await commit();
    } finally {
      clearTimeout(timer);
      finished = true;
      messages.stop();
      await watcher.done;
    }
    if (watcher.error !== undefined) throw watcher.error;
    // The acks are on their way; this round trip makes sure the server has them.
    await nc.flush();
  } catch (err) {
    if (err instanceof EngramError) throw err;
    // The journal's own write failures (a full disk) are the machine's, not the bus's.
    throw (
      fileSystemError(err) ??
      new ServiceError(`${source}: ${describeNatsError(err)}`, "bus", { cause: err })
    );
  } finally {
    await ingestor.close();
    if (!nc.isClosed()) await nc.close();
  }
  return { source, ...ingestor.counts, acknowledged, ...(dropped > 0 ? { dropped } : {}) };
}

interface DrainWatch {
  idleMs: number;
  /** Stop waiting for delivered-but-unacknowledged messages (a dead drain's) at this time. */
  giveUpAt: number;
  lastArrival: () => number;
  /** The drain stopped on its own (an error): nothing left to watch. */
  finished: () => boolean;
  pending: () => Promise<{ waiting: number; unacknowledged: number }>;
  until: AbortSignal | undefined;
}

/** Stops the message iterator once the consumer is quiet and has nothing left to deliver. */
function stopWhenDrained(
  messages: ConsumerMessages,
  watch: DrainWatch,
): { done: Promise<void>; error: unknown } {
  const state: { done: Promise<void>; error: unknown } = {
    done: Promise.resolve(),
    error: undefined,
  };
  state.done = (async () => {
    try {
      for (;;) {
        await sleep(watch.idleMs);
        if (watch.finished()) return;
        if (watch.until !== undefined && !watch.until.aborted) continue;
        if (Date.now() - watch.lastArrival() < watch.idleMs) continue;
        const { waiting, unacknowledged } = await watch.pending();
        if (waiting > 0) continue;
        if (unacknowledged > 0 && Date.now() < watch.giveUpAt) continue;
        messages.stop();
        return;
      }
    } catch (err) {
      state.error = err;
      messages.stop();
    }
  })();
  return state;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
