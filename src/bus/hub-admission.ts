import { readdirSync, readFileSync } from "node:fs";
import type { Server, Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { receiptTime } from "../clock.js";
import type { HubLog } from "./hub-ports.js";
import { directorLine, type IncompatibilityPayload, MSG, PROTOCOL_VERSION } from "./protocol.js";

/**
 * Who the TCP hub lets in: on `tls://`, only a worker whose certificate the hub's CA signed;
 * one without is told why (`protocol_incompatibility.v1`, reason `client_certificate`: the
 * worker exits 2 and spools nothing) and closed, nothing it sends read. Then at most
 * `agent_bus.max_connections` workers at once, fewer when the process's open-files limit
 * could not hold them (`capFor`); one more is told why (reason `connection_limit`: every
 * client version gives up at once and spools) and closed. Running out of descriptors anyway
 * (EMFILE, ENFILE on accept) is reported, never fatal: libuv closes the connection it could
 * not take.
 */

/** Refused connections still being closed; past this many, more are closed without a word. */
export const REFUSING_MAX = 64;
/** Descriptors kept free beside the connections: the journal, the quarantine, git, state files. */
const DESCRIPTORS_KEPT = 48;

/** The open-files limit (`ulimit -n`) and the descriptors open now. */
export interface DescriptorRoom {
  limit: number;
  open: number;
}

/** Read from `/proc/self` (Linux); undefined where it cannot be read or there is no limit. */
export function descriptorRoom(): DescriptorRoom | undefined {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const limit = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
    if (limit === undefined) return undefined;
    return { limit: Number(limit), open: readdirSync("/proc/self/fd").length };
  } catch {
    return undefined;
  }
}

/**
 * The connections the hub holds and the refusals it keeps in flight, so that both fit in the
 * descriptors left, with `DESCRIPTORS_KEPT` to spare: the hub refuses connections before it
 * runs out of descriptors, instead of failing to accept them. Pure.
 */
export function capFor(
  configured: number,
  room: DescriptorRoom | undefined,
): { cap: number; refusing: number } {
  if (room === undefined) return { cap: configured, refusing: REFUSING_MAX };
  const spare = room.limit - room.open - DESCRIPTORS_KEPT;
  const refusing = Math.max(1, Math.min(REFUSING_MAX, Math.floor(spare / 8)));
  return { cap: Math.max(1, Math.min(configured, spare - refusing)), refusing };
}
/** A refused worker that neither reads nor closes is cut off after this long. */
const REFUSE_LINGER_MS = 2000;

export interface AdmissionStats {
  refused: number;
  refused_at_cap: number;
  accept_errors: number;
}

export class HubAdmission {
  private refusing = 0;
  private cap: number;
  private refusingMax = REFUSING_MAX;
  /** Why the cap is below `agent_bus.max_connections`, when it is. */
  private lowered = "";
  /** Set by an accept that failed, cleared by one that succeeds: one warning per episode. */
  private acceptFailing = false;

  constructor(
    private readonly maxConnections: number,
    private readonly stats: AdmissionStats,
    private readonly log: HubLog,
  ) {
    this.cap = maxConnections;
  }

  /**
   * Arms the server: Node's own `maxConnections` closes connections past the cap plus those
   * being refused (the hard backstop), and accept errors are counted instead of stopping it.
   * `fail` gets every other server error.
   */
  arm(server: Server, fail: (error: unknown) => void, room = descriptorRoom()): void {
    const { cap, refusing } = capFor(this.maxConnections, room);
    this.cap = cap;
    this.refusingMax = refusing;
    if (cap < this.maxConnections && room !== undefined) {
      this.lowered = `, lowered from agent_bus.max_connections = ${this.maxConnections} to fit the open-files limit (ulimit -n ${room.limit})`;
      this.log.warn(
        `serving at most ${cap} connections${this.lowered}; raise the limit to serve more workers`,
      );
    }
    server.maxConnections = cap + refusing;
    server.on("error", (error: NodeJS.ErrnoException) => {
      if (error.syscall === "accept") this.acceptFailed(error);
      else fail(error);
    });
  }

  /** True when a new connection may be served; otherwise it has been refused already. */
  admit(socket: Socket, open: number): boolean {
    this.acceptFailing = false;
    const untrusted = certificateRefusal(socket);
    if (untrusted !== undefined) {
      this.stats.refused++;
      this.refuseWith(socket, {
        reason: "client_certificate",
        detail: untrusted,
        protocol_version_expected: PROTOCOL_VERSION,
        protocol_version_seen: null,
      });
      return false;
    }
    if (open < this.cap) return true;
    this.stats.refused++;
    this.stats.refused_at_cap++;
    this.refuseWith(socket, {
      reason: "connection_limit",
      detail: this.lowered
        ? `the hub holds its most connections (${this.cap}${this.lowered}); try again later`
        : `the hub holds its most connections (agent_bus.max_connections = ${this.maxConnections}); try again later`,
      protocol_version_expected: PROTOCOL_VERSION,
      protocol_version_seen: null,
      max_connections: this.cap,
    });
    return false;
  }

  /**
   * Says why, then closes. Whatever the worker sends is dropped unread (no data listener, not
   * parsed, never acknowledged nor quarantined): closing with unread bytes would reset the
   * connection and could take the refusal with it before the worker reads it.
   */
  private refuseWith(socket: Socket, payload: IncompatibilityPayload): void {
    if (this.refusing >= this.refusingMax) {
      socket.destroy();
      return;
    }
    this.refusing++;
    const linger = setTimeout(() => socket.destroy(), REFUSE_LINGER_MS);
    linger.unref();
    socket.on("error", () => socket.destroy());
    socket.once("close", () => {
      clearTimeout(linger);
      this.refusing--;
    });
    socket.resume();
    socket.end(directorLine(MSG.incompatible, payload, 1, receiptTime()));
  }

  private acceptFailed(error: NodeJS.ErrnoException): void {
    this.stats.accept_errors++;
    if (this.acceptFailing) return;
    this.acceptFailing = true;
    const hint =
      error.code === "EMFILE" || error.code === "ENFILE"
        ? `out of file descriptors: lower agent_bus.max_connections (${this.maxConnections}) or raise the limit (ulimit -n)`
        : "the connection was closed";
    this.log.warn(`accept failed (${error.code ?? error.message}): ${hint}; still serving`);
  }
}

/**
 * Why a `tls://` hub refuses this connection's client certificate; undefined when it trusts it
 * (or on plain `tcp://`). The hub asks for a certificate without letting the handshake refuse
 * it: a TLS alert after the handshake reaches the worker as a connection reset, which it cannot
 * tell from a hub going down, so it would spool a note no Director will ever take.
 */
function certificateRefusal(socket: Socket): string | undefined {
  if (!(socket instanceof TLSSocket) || socket.authorized) return undefined;
  const sent = Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
  const why = sent ? `${socket.authorizationError ?? "not verified"}` : "no certificate was sent";
  return `the hub does not accept this worker's client certificate (${why}): it must be signed by the CA the hub's --tls-ca names`;
}
