import type { Socket } from "node:net";
import { receiptTime } from "../clock.js";
import type { MessageType } from "../schema/envelope.js";
import { directorLine, type Frame, type LineSplitter } from "./protocol.js";

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
  /** Worker messages received after the hello: the seq of the last one. */
  received: number;
  /** Highest seq acknowledged, and the highest taken into the current batch. */
  acked: number;
  pendingThrough: number;
  /** The hub's own seq on this connection. */
  outSeq: number;
  lastHeard: number;
  /** Frames that came in behind the hello while it was being judged. */
  early: Frame[];
  judgingHeartbeat: boolean;
  nextJudgeAt: number;
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
