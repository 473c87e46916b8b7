/**
 * The worker's side of the hub's handshake, apart from the connection's bookkeeping in
 * tcp-client.ts: the socket it opens, the hello it says, and what a refusal from the hub
 * means for the sends that follow.
 */
import { isIP, connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ENVELOPE_SCHEMA_VERSION, type Envelope, type MessageType } from "../schema/envelope.js";
import type { WorkerView } from "./hub-drift.js";
import { MSG, PROTOCOL_VERSION } from "./protocol.js";
import { CERTIFICATE_REFUSED } from "./tls-refusal.js";

/** The worker a client speaks for: in its hello and its automatic heartbeats. */
export interface Speaker {
  id: string;
  run_id?: string | undefined;
}

/** Where the hub listens, and how the client proves who it is there. */
export interface HubAddress {
  host: string;
  port: number;
  /** Client certificate and key (and the CA that signed the hub's certificate): `tls://`. */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer | undefined } | undefined;
}

/** A plain or TLS socket to the hub; a host name (not an IP) is the certificate's name. */
export function openHubSocket({ host, port, tls }: HubAddress): Socket {
  return tls
    ? tlsConnect({
        host,
        port,
        cert: tls.cert,
        key: tls.key,
        ...(tls.ca ? { ca: tls.ca } : {}),
        ...(isIP(host) ? {} : { servername: host }),
      })
    : netConnect({ host, port });
}

/** Upstream's nested `worker` and `repo`, and our flat drift fields as aliases. */
export function helloEnvelope(speaker: Speaker, view: WorkerView): Envelope {
  const drift = {
    ...(view.main_ancestor_sha ? { main_ancestor_sha: view.main_ancestor_sha } : {}),
    ...(view.catalog_hash_seen ? { catalog_hash_seen: view.catalog_hash_seen } : {}),
  };
  return speakerEnvelope(MSG.hello, speaker, {
    protocol_version: PROTOCOL_VERSION,
    capabilities: ["bus_ack.v1", "pipelining"],
    worker: { worker_id: speaker.id },
    repo: drift,
    ...drift,
  });
}

/** An envelope of the client's own (a hello, an automatic heartbeat), as its worker. */
export function speakerEnvelope(
  messageType: MessageType,
  speaker: Speaker,
  payload: Record<string, unknown>,
): Envelope {
  return {
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: messageType,
    sent_at: new Date().toISOString(),
    sender: {
      role: "worker" as const,
      id: speaker.id,
      ...(speaker.run_id ? { run_id: speaker.run_id } : {}),
    },
    seq: 0,
    payload,
  };
}

/**
 * What a `protocol_incompatibility.v1` means: a refused certificate is for good (like a TLS
 * alert: `HubRefusedError`, nothing spooled); a hub at its connection limit refuses only what
 * is owed now (the next send tries again); another protocol version is given up for good.
 */
export type HubRefusal =
  | { kind: "certificate"; message: string }
  | { kind: "connection_limit"; message: string }
  | { kind: "protocol"; message: string };

/** Reads a refusal's `reason` and `detail`. */
export function refusalOf(payload: Record<string, unknown>): HubRefusal {
  const detail = String(payload.detail ?? payload.reason);
  if (payload.reason === "client_certificate") {
    return { kind: "certificate", message: `${CERTIFICATE_REFUSED}: ${detail}` };
  }
  if (payload.reason === "connection_limit") {
    return { kind: "connection_limit", message: `hub at its connection limit: ${detail}` };
  }
  return { kind: "protocol", message: `protocol incompatible: ${detail}` };
}
