import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { receiptTime } from "../clock.js";
import type { MessageType } from "../schema/envelope.js";
import { directorLine, type Frame, formatHostPort, LineSplitter, MSG } from "./protocol.js";

/**
 * One worker connection of the TCP hub and the hub's limits on it: what the hub knows of
 * the connection between frames (its state, what it received and acknowledged, its hello).
 */

/** The TTL watchdog looks at least this often. */
export const WATCHDOG_MAX_MS = 1000;
/** Heartbeats of one connection are judged against main at most this often. */
export const JUDGE_EVERY_MS = 1000;
/** Bytes queued to a worker that does not read them before it is disconnected. */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;
/** How long a closing hub waits for workers to read their last acks. */
export const CLOSE_GRACE_MS = 2000;

export type ConnState = "hello" | "judging" | "open" | "closed";

export interface Connection {
  socket: Socket;
  splitter: LineSplitter;
  state: ConnState;
  remote: string;
  source: string;
  /** Who sent it, as far as the hub can trust (`senderOf`): whom the share holds. */
  sender: string;
  /** Frames read while its sender was past its share: taken, in order, once it is under. */
  held: Frame[] | undefined;
  /** Worker messages received after the hello: the seq of the last one. */
  received: number;
  /** Highest seq acknowledged, and the highest taken into the current batch. */
  acked: number;
  pendingThrough: number;
  /** The hub's own seq on this connection. */
  outSeq: number;
  lastHeard: number;
  /** The welcome was sent: the worker hears of cycles from then on. */
  welcomed: boolean;
  /** Frames that came in behind the hello while it was being judged. */
  early: Frame[];
  judgingHeartbeat: boolean;
  nextJudgeAt: number;
}

/** A connection just accepted: it must say hello first. */
export function openConnection(socket: Socket, maxMessageBytes: number): Connection {
  const remote = formatHostPort(socket.remoteAddress ?? "unknown", socket.remotePort ?? 0);
  return {
    socket,
    splitter: new LineSplitter(maxMessageBytes),
    state: "hello",
    remote,
    source: `tcp/${remote}`,
    sender: senderOf(socket),
    held: undefined,
    received: 0,
    acked: 0,
    pendingThrough: 0,
    outSeq: 0,
    lastHeard: Date.now(),
    welcomed: false,
    early: [],
    judgingHeartbeat: false,
    nextJudgeAt: 0,
  };
}

/**
 * What the hub can trust of who is on a connection: the client certificate under TLS (it
 * was checked against the CA), otherwise the address without its port. Never the id a
 * worker names in its hello, nor the port: each new connection has a new one.
 */
export function senderOf(socket: Socket): string {
  const certificate = (socket as Partial<TLSSocket>).getPeerCertificate?.();
  if (certificate?.fingerprint256) return `tls/${certificate.fingerprint256}`;
  return `tcp/${socket.remoteAddress ?? "unknown"}`;
}

/** Sends the Director's message on a connection; a worker that stops reading is dropped. */
export function sendTo(conn: Connection, type: MessageType, payload: object): void {
  if (conn.socket.destroyed || !conn.socket.writable) return;
  if (conn.socket.writableLength > MAX_UNREAD_BYTES) {
    // A worker that does not read what it is told would make the hub hold it forever.
    conn.state = "closed";
    conn.socket.destroy();
    return;
  }
  conn.outSeq++;
  conn.socket.write(directorLine(type, payload, conn.outSeq, receiptTime()));
}

/** Stops reading every connection: a cycle, or a group commit that makes room, holds the buffer. */
export function pauseAll(conns: Iterable<Connection>): void {
  for (const conn of conns) conn.socket.pause();
}

/** Reads again after `pauseAll`; the pause does not count against a worker's TTL. */
export function resumeAll(conns: Iterable<Connection>): void {
  const now = Date.now();
  for (const conn of conns) {
    conn.lastHeard = now;
    // A connection still being welcomed is resumed by its welcome; one held by the sender
    // share, once its sender is under it.
    if (conn.state !== "judging" && conn.held === undefined) conn.socket.resume();
  }
}

/** Closes the connections silent for longer than `ttlMs`; returns how many. */
export function dropSilent(conns: Iterable<Connection>, ttlMs: number): number {
  const now = Date.now();
  let dropped = 0;
  for (const conn of conns) {
    // A connection the sender share holds is not read: its silence is the hub's doing.
    if (conn.held === undefined && now - conn.lastHeard > ttlMs) {
      dropped++;
      conn.state = "closed";
      conn.socket.destroy();
    }
  }
  return dropped;
}

/** Acknowledges each connection through the seq a commit stored; returns how many messages. */
export function ackThrough(through: ReadonlyMap<Connection, number>): number {
  let acknowledged = 0;
  for (const [conn, seq] of through) {
    if (seq > conn.acked) {
      sendTo(conn, MSG.ack, { from_seq: conn.acked + 1, through_seq: seq });
      acknowledged += seq - conn.acked;
      conn.acked = seq;
    }
  }
  return acknowledged;
}

/**
 * Ends every connection, giving workers `CLOSE_GRACE_MS` to read their last acks; what they
 * sent since is read and dropped (not acknowledged, so resent elsewhere).
 */
export async function closeAll(conns: Iterable<Connection>): Promise<void> {
  const gone = [...conns].map(
    (conn) =>
      new Promise<void>((resolve) => {
        if (conn.socket.destroyed) return resolve();
        conn.socket.once("close", () => resolve());
        // Read again (and drop) to see the worker's end.
        conn.state = "closed";
        conn.socket.resume();
        conn.socket.end();
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(gone),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  for (const conn of conns) {
    conn.state = "closed";
    conn.socket.destroy();
  }
}
