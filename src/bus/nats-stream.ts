import {
  AckPolicy,
  type ConsumerInfo,
  DeliverPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamInfo,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import type { NatsConfig } from "../schema/config.js";
import type { BusUrl } from "./url.js";

/** What both ends of the NATS transport agree on: the stream, its subjects and the consumer. */
export interface NatsSettings {
  stream: string;
  subjectPrefix: string;
  consumer: string;
  duplicateWindowMs: number;
  maxAgeMs: number;
  ackWaitMs: number;
  connectTimeoutMs: number;
  publishTimeoutMs: number;
  fetchBatch: number;
}

export function natsSettings(config: NatsConfig): NatsSettings {
  return {
    stream: config.stream,
    subjectPrefix: config.subject_prefix,
    consumer: config.consumer,
    duplicateWindowMs: config.duplicate_window_seconds * 1000,
    maxAgeMs: config.max_age_seconds * 1000,
    ackWaitMs: config.ack_wait_seconds * 1000,
    connectTimeoutMs: Math.round(config.connect_timeout_seconds * 1000),
    publishTimeoutMs: Math.round(config.publish_timeout_seconds * 1000),
    fetchBatch: config.fetch_batch,
  };
}

export type NatsUrl = Extract<BusUrl, { kind: "nats" }>;

/**
 * The subject of one worker's envelopes. Worker ids are already `[A-Za-z0-9_-]`; anything
 * else (a hand-built envelope) is folded into that alphabet, so no id can add subject tokens
 * or wildcards.
 */
export function subjectFor(settings: NatsSettings, senderId: unknown): string {
  const raw = typeof senderId === "string" ? senderId : "";
  const token = raw.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 128);
  return `${settings.subjectPrefix}.${token.length > 0 ? token : "unknown"}`;
}

/**
 * One connection that fails instead of retrying: a worker falls back to its spool and a
 * Director drain reports the error, rather than either hanging on a server that is down.
 */
export function connectNats(
  url: NatsUrl,
  settings: NatsSettings,
  name: string,
): Promise<NatsConnection> {
  return connect({
    servers: url.servers,
    name,
    timeout: settings.connectTimeoutMs,
    reconnect: false,
    // A stack captured for every request costs more than the publish itself.
    noAsyncTraces: true,
  });
}

/**
 * Creates the stream when it is missing. Limits retention with a maximum age: messages stay
 * for `max_age_seconds` whether ingested or not (a Director's consumer tracks what it has
 * taken), which costs the server far less per message than work-queue retention (measured
 * by bench/transport-nats.ts: about half the server CPU) and lets a new consumer replay.
 * An existing stream is used as it is (an operator may have set replicas or limits).
 */
export async function ensureStream(
  jsm: JetStreamManager,
  settings: NatsSettings,
): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(settings.stream);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    return await jsm.streams.add({
      name: settings.stream,
      subjects: [`${settings.subjectPrefix}.>`],
      retention: RetentionPolicy.Limits,
      max_age: nanos(settings.maxAgeMs),
      storage: StorageType.File,
      duplicate_window: nanos(settings.duplicateWindowMs),
    });
  } catch (err) {
    // Another writer created it between our look and our add: fine if it now exists.
    return await jsm.streams.info(settings.stream).catch(() => {
      throw err;
    });
  }
}

/**
 * Creates the Director's durable pull consumer when it is missing, and keeps its ack wait in
 * line with the config. Explicit acks: each message is acknowledged only after the journal
 * fsync that made it durable. The consumer as it was before this call; undefined when it was
 * created now.
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  settings: NatsSettings,
): Promise<ConsumerInfo | undefined> {
  const wanted = {
    ack_wait: nanos(settings.ackWaitMs),
    max_ack_pending: Math.max(20_000, settings.fetchBatch * 4),
  };
  try {
    const info = await jsm.consumers.info(settings.stream, settings.consumer);
    if (
      info.config.ack_wait !== wanted.ack_wait ||
      info.config.max_ack_pending !== wanted.max_ack_pending
    ) {
      await jsm.consumers.update(settings.stream, settings.consumer, wanted);
    }
    return info;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  await jsm.consumers.add(settings.stream, {
    durable_name: settings.consumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: `${settings.subjectPrefix}.>`,
    ...wanted,
  });
  return undefined;
}

/**
 * Messages the stream dropped (by its `max_age`, or an operator's limits) before the
 * consumer was ever given them: lost to memory, so a drain says so. Counted only for a
 * consumer that existed before (a new one cannot tell dropped from taken by another) on a
 * stream that holds nothing but its subjects (otherwise others' messages would count).
 */
export function droppedBeforeDelivery(
  settings: NatsSettings,
  stream: StreamInfo,
  consumer: ConsumerInfo | undefined,
): number {
  if (consumer === undefined) return 0;
  const subjects = stream.config.subjects ?? [];
  if (subjects.length !== 1 || subjects[0] !== `${settings.subjectPrefix}.>`) return 0;
  return Math.max(0, stream.state.first_seq - 1 - consumer.delivered.stream_seq);
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === "StreamNotFoundError" || name === "ConsumerNotFoundError";
}

/** A publish to a subject no stream takes comes back as "JetStream not enabled" (503). */
export function isNoStream(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === "JetStreamNotEnabled";
}

/** A short reason for a report: the vendor's message, never a stack or a whole response. */
export function describeNatsError(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  const code = typeof e?.code === "string" ? ` (${e.code})` : "";
  return `${message}${code}`.slice(0, 300);
}
