/**
 * The hub's side of the handshake, apart from the serving loop in tcp-hub.ts: a connection's
 * first frame read as a hello (or the refusal it earns), the welcome that answers it, and a
 * heartbeat's view of main. Pure reads of the wire: tcp-hub.ts sends, quarantines and judges.
 */
import type { AgentBusConfig } from "../schema/config.js";
import type { Catalog } from "../schema/engram.js";
import { Envelope, HelloPayload } from "../schema/envelope.js";
import { type WorkerView, workerViewOf } from "./hub-drift.js";
import {
  ACCEPTED_PROTOCOL_VERSIONS,
  type Frame,
  type IncompatibilityPayload,
  MSG,
  PROTOCOL_VERSION,
  type WelcomePayload,
} from "./protocol.js";

/**
 * A first frame that is a hello in a protocol this hub speaks: the worker it names and its
 * view of main. Otherwise the refusal to send; `notHello` when it was no hello at all (an old
 * client or a stranger), for the quarantine.
 */
export type HelloReading =
  | { ok: true; senderId: string; version: string; view: WorkerView }
  | {
      ok: false;
      refusal: IncompatibilityPayload;
      notHello?: { text: string; bytes: number };
    };

/** Reads a connection's first frame (an oversized one is never a hello). */
export function readHello(frame: Frame): HelloReading {
  const text = frame.kind === "line" ? frame.text : frame.head;
  let raw: unknown;
  try {
    raw = frame.kind === "line" ? JSON.parse(text) : undefined;
  } catch {}
  const envelope = Envelope.safeParse(raw);
  const hello =
    envelope.success && envelope.data.message_type === MSG.hello
      ? HelloPayload.safeParse(envelope.data.payload)
      : undefined;
  if (!envelope.success || !hello?.success) {
    return {
      ok: false,
      notHello: {
        text,
        bytes: frame.kind === "line" ? Buffer.byteLength(text, "utf8") : frame.bytes,
      },
      refusal: {
        reason: "hello_expected",
        detail: `expected ${MSG.hello} with protocol_version "${PROTOCOL_VERSION}" as the first message`,
        protocol_version_expected: PROTOCOL_VERSION,
        protocol_version_seen: null,
      },
    };
  }
  const version = hello.data.protocol_version;
  if (version === undefined || !ACCEPTED_PROTOCOL_VERSIONS.includes(version)) {
    return {
      ok: false,
      refusal: {
        reason: "protocol_version",
        detail: `this hub speaks protocol ${PROTOCOL_VERSION}, the worker ${version === undefined ? "named none" : `speaks ${version}`}; upgrade the worker`,
        protocol_version_expected: PROTOCOL_VERSION,
        protocol_version_seen: version ?? null,
      },
    };
  }
  return {
    ok: true,
    senderId: envelope.data.sender.id,
    version,
    view: workerViewOf(MSG.hello, hello.data),
  };
}

/**
 * `welcome.v1`: the protocol agreed, this hub's run, main's tip and catalog as expected (the
 * catalog the hub holds when main's is unknown), and the bus's limits and heartbeat timing.
 */
export function welcomePayload(
  version: string,
  runId: string,
  expected: { sha: string; catalogHash: string | undefined } | undefined,
  catalog: Catalog,
  bus: AgentBusConfig,
): WelcomePayload {
  return {
    protocol_version: version,
    director: {
      run_id: runId,
      ...(expected ? { main_sha_expected: expected.sha } : {}),
      catalog_hash_expected: expected?.catalogHash ?? catalog.hash,
    },
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    max_message_bytes: bus.max_message_bytes,
    heartbeat_interval_seconds: bus.heartbeat_interval_seconds,
    heartbeat_ttl_seconds: bus.heartbeat_ttl_seconds,
  };
}

/**
 * A heartbeat's view of main, from upstream's `state.repo` or our flat fields; undefined when
 * the line is no heartbeat object (the Ingestor quarantines it, and refuses a wrong type).
 */
export function heartbeatView(text: string): WorkerView | undefined {
  try {
    const raw = JSON.parse(text) as { message_type?: unknown; payload?: unknown };
    const payload = raw.payload;
    if (raw.message_type !== MSG.heartbeat || typeof payload !== "object" || payload === null) {
      return undefined;
    }
    return workerViewOf(MSG.heartbeat, payload as Record<string, unknown>);
  } catch {
    return undefined;
  }
}
