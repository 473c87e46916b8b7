import type { AgentBusConfig } from "../schema/config.js";
import type { Catalog } from "../schema/engram.js";
import { Envelope, HelloPayload } from "../schema/envelope.js";
import type { WorkerView } from "./hub-drift.js";
import { type Frame, MSG, PROTOCOL_VERSION, type WelcomePayload } from "./protocol.js";

/** A first frame read as a hello: its sender and the worker's view, or nothing (refused). */
export type HelloRead =
  | { ok: true; senderId: string; version: string | undefined; view: WorkerView }
  | { ok: false; text: string };

/** Reads the first frame of a connection; anything but a valid `protocol_hello.v1` is `ok: false`. */
export function readHello(frame: Frame): HelloRead {
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
  if (!envelope.success || !hello?.success) return { ok: false, text };
  return {
    ok: true,
    senderId: envelope.data.sender.id,
    version: hello.data.protocol_version,
    view: hello.data,
  };
}

/** The worker's view of main in a heartbeat line, or undefined when the line is not one. */
export function heartbeatView(text: string): WorkerView | undefined {
  try {
    const raw = JSON.parse(text) as { message_type?: unknown; payload?: Record<string, unknown> };
    if (raw.message_type !== MSG.heartbeat || typeof raw.payload !== "object") return undefined;
    const { main_ancestor_sha, catalog_hash_seen } = raw.payload ?? {};
    return {
      main_ancestor_sha: typeof main_ancestor_sha === "string" ? main_ancestor_sha : undefined,
      catalog_hash_seen: typeof catalog_hash_seen === "string" ? catalog_hash_seen : undefined,
    };
  } catch {
    return undefined; // the Ingestor quarantines it
  }
}

/** What `protocol_welcome.v1` tells a worker: the catalog it should hold and the bus limits. */
export function welcomePayload(catalog: Catalog, bus: AgentBusConfig): WelcomePayload {
  return {
    protocol_version: PROTOCOL_VERSION,
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    max_message_bytes: bus.max_message_bytes,
    heartbeat_interval_seconds: bus.heartbeat_interval_seconds,
    heartbeat_ttl_seconds: bus.heartbeat_ttl_seconds,
  };
}

/** `engram_announce.v1`: the engrams a cycle wrote, as the new catalog lists them. */
export function announcePayload(catalog: Catalog, writtenPaths: readonly string[]) {
  const written = new Set(writtenPaths);
  return {
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    engrams: catalog.entries
      .filter((e) => written.has(e.path))
      .map(({ engram_id, scope, version, path, hash, topics }) => ({
        engram_id,
        scope,
        version,
        path,
        hash,
        topics,
      })),
  };
}

/** `engram_catalog_snapshot.v1`: every entry of the catalog, without its topics. */
export function snapshotPayload(catalog: Catalog) {
  return {
    catalog_version: catalog.catalog_version,
    catalog_hash: catalog.hash,
    created_at: catalog.created_at,
    entries: catalog.entries.map(({ engram_id, scope, version, path, hash }) => ({
      engram_id,
      scope,
      version,
      path,
      hash,
    })),
  };
}
