import type { Server, Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { receiptTime } from "../clock.js";
import type { HubLog } from "./hub-ports.js";
import { directorLine, type IncompatibilityPayload, MSG, PROTOCOL_VERSION } from "./protocol.js";

/**
 * Who the TCP hub lets in: on `tls://`, only a worker whose certificate the hub's CA signed;
 * one without is told why (`protocol_incompatibility.v1`, reason `client_certificate`: the
 * worker exits 2 and spools nothing) and closed, nothing it sends read. Then at most
 * `agent_bus.max_connections` workers at once; one more is told why (reason
 * `connection_limit`: every client version gives up at once and spools) and closed. Running out of descriptors anyway (EMFILE, ENFILE
 * on accept) is reported, never fatal: libuv closes the connection it could not take.
 */

/** Refused connections still being closed; past this many, more are closed without a word. */
export const REFUSING_MAX = 64;
/** A refused worker that neither reads nor closes is cut off after this long. */
const REFUSE_LINGER_MS = 2000;

export interface AdmissionStats {
  refused: number;
  refused_at_cap: number;
  accept_errors: number;
}

export class HubAdmission {
  private refusing = 0;
  /** Set by an accept that failed, cleared by one that succeeds: one warning per episode. */
  private acceptFailing = false;

  constructor(
    private readonly maxConnections: number,
    private readonly stats: AdmissionStats,
    private readonly log: HubLog,
  ) {}

  /**
   * Arms the server: Node's own `maxConnections` closes connections past the cap plus those
   * being refused (the hard backstop), and accept errors are counted instead of stopping it.
   * `fail` gets every other server error.
   */
  arm(server: Server, fail: (error: unknown) => void): void {
    server.maxConnections = this.maxConnections + REFUSING_MAX;
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
    if (open < this.maxConnections) return true;
    this.stats.refused++;
    this.stats.refused_at_cap++;
    this.refuseWith(socket, {
      reason: "connection_limit",
      detail: `the hub holds its most connections (agent_bus.max_connections = ${this.maxConnections}); try again later`,
      protocol_version_expected: PROTOCOL_VERSION,
      protocol_version_seen: null,
      max_connections: this.maxConnections,
    });
    return false;
  }

  /**
   * Says why, then closes. Whatever the worker sends is dropped unread (no data listener, not
   * parsed, never acknowledged nor quarantined): closing with unread bytes would reset the
   * connection and could take the refusal with it before the worker reads it.
   */
  private refuseWith(socket: Socket, payload: IncompatibilityPayload): void {
    if (this.refusing >= REFUSING_MAX) {
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
