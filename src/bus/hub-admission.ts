import type { Server, Socket } from "node:net";
import { receiptTime } from "../clock.js";
import type { HubLog } from "./hub-ports.js";
import { directorLine, type IncompatibilityPayload, MSG, PROTOCOL_VERSION } from "./protocol.js";

/**
 * Who the TCP hub lets in: at most `agent_bus.max_connections` workers at once; one more is
 * told why (`protocol_incompatibility.v1`, reason `connection_limit`: every client version
 * gives up at once and spools) and closed. Running out of descriptors anyway (EMFILE, ENFILE
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
    if (open < this.maxConnections) return true;
    this.stats.refused++;
    this.stats.refused_at_cap++;
    if (this.refusing >= REFUSING_MAX) {
      socket.destroy();
      return false;
    }
    this.refusing++;
    const payload: IncompatibilityPayload = {
      reason: "connection_limit",
      detail: `the hub holds its most connections (agent_bus.max_connections = ${this.maxConnections}); try again later`,
      protocol_version_expected: PROTOCOL_VERSION,
      protocol_version_seen: null,
      max_connections: this.maxConnections,
    };
    const linger = setTimeout(() => socket.destroy(), REFUSE_LINGER_MS);
    linger.unref();
    socket.on("error", () => socket.destroy());
    socket.once("close", () => {
      clearTimeout(linger);
      this.refusing--;
    });
    // Read (and drop) the hello: closing with unread bytes would reset the connection and
    // could take the refusal with it before the worker reads it.
    socket.resume();
    socket.end(directorLine(MSG.incompatible, payload, 1, receiptTime()));
    return false;
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
