import {
  AckPolicy,
  type ConsumerInfo,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamAPI,
  type StreamInfo,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import type { NatsConfig } from "../schema/config.js";
import type { NatsCredential } from "./nats-credentials.js";
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
 * `credential` is the environment's (`natsCredentialFromEnv`), never the config's.
 */
export function connectNats(
  url: NatsUrl,
  settings: NatsSettings,
  name: string,
  credential?: NatsCredential,
): Promise<NatsConnection> {
  return connect({
    ...credential?.options,
    servers: url.servers,
    name,
    timeout: settings.connectTimeoutMs,
    reconnect: false,
    // A stack captured for every request costs more than the publish itself.
    noAsyncTraces: true,
  });
}

/** How a transport waits between two attempts (a test makes the world change there instead). */
export type Pause = (ms: number) => Promise<void>;

export const pause: Pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The pauses before each new attempt of a lost creation race: bounded, about 1.6 s in all,
 * far longer than a server takes to finish creating a stream another client asked for.
 */
export const RACE_PAUSES_MS: readonly number[] = [20, 50, 100, 200, 400, 800];

/** JetStream API error codes (the server's `err_code`, stable across versions). */
const STREAM_NAME_IN_USE = 10058;
const STREAM_SUBJECTS_OVERLAP = 10065;

/** What `ensureStream` needs of a JetStreamManager (a test may wrap it). */
export interface StreamLookup {
  streams: Pick<StreamAPI, "info" | "add">;
}

/**
 * Creates the stream when it is missing. Limits retention with a maximum age: messages stay
 * for `max_age_seconds` whether ingested or not (a Director's consumer tracks what it has
 * taken), which costs the server far less per message than work-queue retention (measured
 * by bench/transport-nats.ts: about half the server CPU) and lets a new consumer replay.
 * An existing stream is used as it is (an operator may have set replicas or limits).
 *
 * Any number of workers and Directors may call this at the same moment. The server answers
 * a create with the same config as one in progress with success, and one with another config
 * (another version's defaults) with "stream name already in use" (10058): the loser looks the
 * stream up again and uses it, waiting `RACE_PAUSES_MS` between looks while the lookup lags
 * behind the name (bounded: then it fails and the caller spools). Anything else that refuses
 * the creation (10065: another stream takes these subjects) fails at once with what to do.
 */
export async function ensureStream(
  jsm: StreamLookup,
  settings: NatsSettings,
  wait: Pause = pause,
): Promise<StreamInfo> {
  for (let attempt = 0; ; attempt++) {
    const existing = await lookUpStream(jsm, settings.stream);
    if (existing !== undefined) return existing;
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
      // Lost the race: whoever won made the stream, so look again before anything else.
      const made = await lookUpStream(jsm, settings.stream).catch(() => undefined);
      if (made !== undefined) return made;
      const delay = RACE_PAUSES_MS[attempt];
      if (apiCode(err) !== STREAM_NAME_IN_USE || delay === undefined) {
        throw new StreamSetupError(settings, err);
      }
      await wait(delay);
    }
  }
}

/** The stream's info; undefined when there is no stream of that name (yet). */
async function lookUpStream(jsm: StreamLookup, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (apiCode(err) === JetStreamApiCodes.StreamNotFound) return undefined;
    throw err;
  }
}

/** The stream could not be created nor found: names it and says what to change. */
export class StreamSetupError extends Error {
  override readonly name = "StreamSetupError";
  constructor(settings: NatsSettings, cause: unknown) {
    const subjects = `${settings.subjectPrefix}.>`;
    const hint =
      apiCode(cause) === STREAM_SUBJECTS_OVERLAP
        ? `; another stream already takes ${subjects}: name that stream in [agent_bus.nats] stream, or choose another subject_prefix`
        : "";
    super(
      `stream ${settings.stream} (${subjects}) cannot be created: ${describeNatsError(cause)}${hint}`,
      { cause },
    );
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
  try {
    await jsm.consumers.add(settings.stream, {
      durable_name: settings.consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${settings.subjectPrefix}.>`,
      ...wanted,
    });
  } catch (err) {
    // Another drain created it first (with other settings): it exists now, which is enough.
    await jsm.consumers.info(settings.stream, settings.consumer).catch(() => {
      throw err;
    });
  }
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
  const code = apiCode(err);
  return code === JetStreamApiCodes.StreamNotFound || code === JetStreamApiCodes.ConsumerNotFound;
}

/** The JetStream API's `err_code` of an error the client threw; undefined for any other error. */
function apiCode(err: unknown): number | undefined {
  return err instanceof JetStreamApiError ? err.code : undefined;
}

/** A short reason for a report: the vendor's message, never a stack or a whole response. */
export function describeNatsError(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  const api = apiCode(err);
  const code =
    typeof e?.code === "string" ? ` (${e.code})` : api !== undefined ? ` (JetStream ${api})` : "";
  return `${message}${code}`.slice(0, 300);
}
