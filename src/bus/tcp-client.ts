import type { Socket } from "node:net";
import type { Envelope } from "../schema/envelope.js";
import { newEventId } from "../state/random-id.js";
import {
  type HubAddress,
  helloEnvelope,
  openHubSocket,
  refusalOf,
  type Speaker,
  speakerEnvelope,
} from "./client-hello.js";
import type { WorkerView } from "./hub-drift.js";
import { HubRefusedError, HubUnavailableError } from "./hub-errors.js";
import {
  bodyWithoutSeq,
  CLIENT_MAX_INCOMING_BYTES,
  type Frame,
  LineSplitter,
  lineWithSeq,
  MSG,
  type WelcomePayload,
} from "./protocol.js";
import { tlsRefusal } from "./tls-refusal.js";

/** How long the hub may stay unreachable before a send gives up (the spool takes over). */
export const DEFAULT_UNREACHABLE_MS = 5000;
const BACKOFF_BASE_MS = 50;
const BACKOFF_MAX_MS = 1000;
/** One connection attempt, hello to welcome included. */
const ATTEMPT_MAX_MS = 5000;
/** A connection that acknowledges nothing this long is taken for dead. */
const DEFAULT_ACK_TIMEOUT_MS = 30_000;

/** A message from the hub, as parsed (only its envelope fields are relied on). */
export interface HubMessage {
  message_type: string;
  seq: number;
  payload: Record<string, unknown>;
}

export interface TcpClientOptions extends HubAddress {
  /** Who says hello; by default the sender of the first envelope sent. */
  sender?: Speaker | undefined;
  /** What the hello says of the worker's view of main (read on every connection). */
  hello?: (() => Promise<WorkerView> | WorkerView) | undefined;
  /** Give up on a send once the hub has been unreachable this long (default 5000 ms). */
  unreachableMs?: number | undefined;
  ackTimeoutMs?: number | undefined;
  /**
   * Automatic heartbeats for a long-lived client, every `heartbeat_interval_seconds` the hub
   * announces: this gives each one's payload (stage, progress, drift fields).
   */
  heartbeat?: (() => Promise<Record<string, unknown>> | Record<string, unknown>) | undefined;
  /** Every message the hub sends (acks included), after the client has handled it. */
  onMessage?: ((message: HubMessage) => void) | undefined;
}

export { HubRefusedError, HubUnavailableError };

interface Group {
  remaining: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Outgoing {
  envelope: Envelope;
  body: string;
  /** Its seq on the current connection; 0 when not (yet) sent on it. */
  connSeq: number;
  group: Group;
}

type State = "idle" | "waiting" | "connecting" | "open" | "incompatible" | "closed";

/**
 * The worker side of the TCP hub: says hello, sends envelopes pipelined, and settles each
 * `send` when the hub has acknowledged all of its envelopes (durable at the Director). When
 * the connection drops it reconnects with bounded exponential backoff and jitter, says hello
 * again and resends everything not yet acknowledged, with the same `event_id` (the
 * Director's dedup makes a resend harmless). Keep one open for many sends, or one per send.
 */
export class TcpBusClient {
  private queue: Outgoing[] = [];
  /** Index of the oldest unacknowledged envelope, and of the first not sent on this connection. */
  private head = 0;
  private unsent = 0;
  private state: State = "idle";
  private socket: Socket | undefined;
  private nextSeq = 1;
  private writes: string[] = [];
  private writeScheduled = false;
  private attempt = 0;
  private unreachableSince: number | undefined;
  private lastError = "not connected yet";
  private retryTimer: NodeJS.Timeout | undefined;
  /** Why the hub refused this worker for good (a certificate), once it has. */
  private refusal: string | undefined;
  private attemptTimer: NodeJS.Timeout | undefined;
  private ackTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private whenOpen: Group[] = [];
  /** Who said hello: heartbeats speak for the same worker. */
  private speaker: Speaker = { id: "worker" };
  private readonly unreachableMs: number;
  private readonly ackTimeoutMs: number;
  /** The last welcome and the last `sync_required.v1` payload the hub sent, if any. */
  welcome: WelcomePayload | undefined;
  syncRequired: Record<string, unknown> | undefined;
  /** Connections that reached the welcome. */
  connections = 0;

  constructor(private readonly options: TcpClientOptions) {
    this.unreachableMs = options.unreachableMs ?? DEFAULT_UNREACHABLE_MS;
    this.ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
  }

  /** Envelopes waiting for an acknowledgement. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Connects (or waits for the connection) now, instead of on the first send. */
  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (this.refusal !== undefined) return Promise.reject(new HubRefusedError(this.refusal));
    if (this.state === "closed" || this.state === "incompatible") {
      return Promise.reject(new HubUnavailableError(this.lastError, []));
    }
    const open = new Promise<void>((resolve, reject) => {
      this.whenOpen.push({ remaining: 0, resolve, reject });
    });
    if (this.state === "idle") this.dial();
    return open;
  }

  /**
   * Resolves once the hub has acknowledged every envelope (each gets an `event_id` if it has
   * none, so that a resend is recognized); rejects with `HubUnavailableError` when it cannot.
   */
  send(envelopes: readonly Envelope[]): Promise<void> {
    if (this.state === "closed") return Promise.reject(new Error("the bus client is closed"));
    if (this.refusal !== undefined) return Promise.reject(new HubRefusedError(this.refusal));
    if (this.state === "incompatible") {
      return Promise.reject(new HubUnavailableError(this.lastError, [...envelopes]));
    }
    const settled = new Promise<void>((resolve, reject) => {
      const group: Group = { remaining: envelopes.length, resolve, reject };
      for (const given of envelopes) {
        const envelope: Envelope =
          typeof given.event_id === "string" && given.event_id.length > 0
            ? given
            : { ...given, event_id: newEventId() };
        this.queue.push({ envelope, body: bodyWithoutSeq(envelope), connSeq: 0, group });
      }
      if (envelopes.length === 0) resolve();
    });
    if (envelopes.length === 0) return settled;
    if (this.state === "open") this.writeUnsent();
    else if (this.state === "idle") this.dial();
    return settled;
  }

  /** Stops heartbeats and reconnects; unacknowledged sends are rejected. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.retryTimer);
    clearTimeout(this.attemptTimer);
    clearTimeout(this.ackTimer);
    clearInterval(this.heartbeatTimer);
    this.rejectAll("the bus client was closed");
    const socket = this.socket;
    this.socket = undefined;
    if (socket && !socket.destroyed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => socket.destroy(), 1000);
        socket.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        socket.end();
      });
    }
  }

  private dial(): void {
    this.state = "connecting";
    this.unreachableSince ??= Date.now();
    // The hello's drift fields (git reads) are read while the connection is being made.
    const viewRead = Promise.resolve()
      .then(() => this.options.hello?.())
      .catch(() => undefined); // a courtesy: a worker that cannot read git still talks
    const first = this.queue[this.head]?.envelope.sender;
    const sender = this.options.sender ?? first ?? this.speaker;
    this.speaker = { id: sender.id, run_id: sender.run_id };
    const { host, port, tls } = this.options;
    const socket = openHubSocket(this.options);
    this.socket = socket;
    this.nextSeq = 1;
    const budget = this.unreachableMs - (Date.now() - (this.unreachableSince ?? Date.now()));
    this.armAttempt(
      socket,
      Math.max(100, Math.min(ATTEMPT_MAX_MS, budget)),
      "the hub did not take the connection in time",
    );
    socket.setNoDelay(true);
    socket.once(tls ? "secureConnect" : "connect", () => {
      clearTimeout(this.attemptTimer);
      void viewRead.then((view) => {
        if (this.socket !== socket || socket.destroyed) return;
        socket.write(`${JSON.stringify(helloEnvelope(this.speaker, view ?? {}))}\n`);
        // Judged from the hello: not from the process start, nor from its own git reads,
        // which fifty workers starting at once on two cores make slow.
        this.armAttempt(socket, ATTEMPT_MAX_MS, "no welcome from the hub in time");
      });
    });
    const splitter = new LineSplitter(CLIENT_MAX_INCOMING_BYTES);
    const frames: Frame[] = [];
    socket.on("data", (chunk: Buffer) => {
      splitter.push(chunk, frames);
      for (const frame of frames) {
        if (frame.kind === "line" && this.socket === socket) this.onLine(frame.text);
      }
      frames.length = 0;
    });
    socket.on("error", (error) => {
      this.lastError = `${host}:${port}: ${error.message}`;
      const refusal = tls ? tlsRefusal(error) : undefined;
      if (refusal !== undefined) this.refuse(`${refusal}: ${error.message}`);
    });
    socket.on("close", () => this.onClose(socket));
  }

  /**
   * Gives the connection `ms` to reach its next step. A process starved of CPU runs its timers
   * before it reads its sockets: an answer that did arrive gets one more read (setImmediate
   * runs after the poll phase) before the attempt is given up.
   */
  private armAttempt(socket: Socket, ms: number, message: string): void {
    clearTimeout(this.attemptTimer);
    this.attemptTimer = setTimeout(() => {
      setImmediate(() => {
        if (this.socket === socket && this.state === "connecting") {
          socket.destroy(new Error(message));
        }
      });
    }, ms);
  }

  private onLine(text: string): void {
    let message: HubMessage;
    try {
      message = JSON.parse(text) as HubMessage;
    } catch {
      return; // the hub speaks JSON; anything else is noise on the wire
    }
    if (typeof message !== "object" || message === null) return;
    const payload = (message.payload ?? {}) as Record<string, unknown>;
    switch (message.message_type) {
      case MSG.ack:
        this.onAck(Number(payload.through_seq));
        break;
      case MSG.welcome:
        this.onWelcome(payload as unknown as WelcomePayload);
        break;
      case MSG.incompatible:
        this.onRefused(payload);
        break;
      case MSG.syncRequired:
        this.syncRequired = payload;
        break;
    }
    this.options.onMessage?.(message);
  }

  /** `protocol_incompatibility.v1`, as `refusalOf` reads it; the caller spools what is owed. */
  private onRefused(payload: Record<string, unknown>): void {
    const refusal = refusalOf(payload);
    if (refusal.kind === "certificate") {
      // For good, like a TLS alert: exit 2, nothing spooled.
      this.refuse(refusal.message);
      this.socket?.destroy();
      return;
    }
    const full = refusal.kind === "connection_limit";
    this.lastError = refusal.message;
    clearTimeout(this.attemptTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.rejectAll(this.lastError);
    if (full) {
      this.state = "idle";
      this.unreachableSince = undefined;
      this.attempt = 0;
    } else {
      this.state = "incompatible";
    }
    socket?.destroy();
  }

  private onWelcome(welcome: WelcomePayload): void {
    clearTimeout(this.attemptTimer);
    this.welcome = welcome;
    this.state = "open";
    this.connections++;
    this.attempt = 0;
    this.unreachableSince = undefined;
    for (const group of this.whenOpen.splice(0)) group.resolve();
    this.startHeartbeat(welcome.heartbeat_interval_seconds);
    this.writeUnsent();
  }

  private onAck(through: number): void {
    if (!Number.isInteger(through)) return;
    let progressed = false;
    while (this.head < this.unsent) {
      const out = this.queue[this.head] as Outgoing;
      if (out.connSeq === 0 || out.connSeq > through) break;
      this.head++;
      progressed = true;
      if (--out.group.remaining === 0) out.group.resolve();
    }
    if (!progressed) return;
    // Drop the acknowledged prefix now and then, not on every ack.
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.unsent -= this.head;
      this.head = 0;
    }
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    if (this.head < this.unsent) this.armAckTimer();
  }

  private writeUnsent(): void {
    if (this.state !== "open") return;
    const before = this.unsent;
    while (this.unsent < this.queue.length) {
      const out = this.queue[this.unsent] as Outgoing;
      out.connSeq = this.nextSeq++;
      this.writes.push(lineWithSeq(out.body, out.connSeq));
      this.unsent++;
    }
    if (this.unsent > before) this.armAckTimer();
    if (!this.writeScheduled && this.writes.length > 0) {
      this.writeScheduled = true;
      // Sends made in the same turn go out in one write.
      setImmediate(() => this.flushWrites());
    }
  }

  private flushWrites(): void {
    this.writeScheduled = false;
    const data = this.writes.join("");
    this.writes = [];
    if (this.socket && this.state === "open" && data.length > 0) this.socket.write(data);
  }

  private armAckTimer(): void {
    if (this.ackTimer !== undefined) return;
    const socket = this.socket;
    this.ackTimer = setTimeout(() => {
      this.ackTimer = undefined;
      socket?.destroy(new Error(`no acknowledgement in ${this.ackTimeoutMs} ms`));
    }, this.ackTimeoutMs);
  }

  private startHeartbeat(intervalSeconds: number): void {
    const beat = this.options.heartbeat;
    if (!beat || this.heartbeatTimer !== undefined) return;
    const ms = Math.max(1, Number(intervalSeconds) || 30) * 1000;
    this.heartbeatTimer = setInterval(() => {
      void (async () => {
        const payload = await beat();
        await this.send([speakerEnvelope(MSG.heartbeat, this.speaker, payload)]);
      })().catch(() => {
        // A heartbeat that cannot be delivered is simply late: the next one says the same.
      });
    }, ms);
    this.heartbeatTimer.unref();
  }

  private onClose(socket: Socket): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    clearTimeout(this.attemptTimer);
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    this.writes = [];
    if (this.state === "closed" || this.state === "incompatible") return;
    // Whatever was sent on that connection and not acknowledged goes again on the next one.
    for (let i = this.head; i < this.unsent; i++) (this.queue[i] as Outgoing).connSeq = 0;
    this.unsent = this.head;
    if (this.state === "open") this.unreachableSince = Date.now();
    this.state = "waiting";
    this.retry();
  }

  private retry(): void {
    if (this.pending === 0 && this.whenOpen.length === 0) {
      // Nothing owed: connect again on the next send.
      this.state = "idle";
      this.unreachableSince = undefined;
      this.attempt = 0;
      return;
    }
    const since = this.unreachableSince ?? Date.now();
    const left = this.unreachableMs - (Date.now() - since);
    if (left <= 0) {
      this.rejectAll(this.lastError);
      this.state = "idle";
      this.unreachableSince = undefined;
      this.attempt = 0;
      return;
    }
    const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** this.attempt);
    this.attempt++;
    const delay = Math.min(left, backoff / 2 + Math.random() * (backoff / 2));
    this.retryTimer = setTimeout(() => this.dial(), delay);
  }

  /** Given up for good (a certificate refused): every send fails, and no retry follows. */
  private refuse(reason: string): void {
    this.state = "incompatible";
    this.refusal = reason;
    this.lastError = reason;
    clearTimeout(this.attemptTimer);
    clearTimeout(this.retryTimer);
    this.rejectAll(reason, () => new HubRefusedError(reason));
  }

  /** Fails every unacknowledged send, each with the envelopes it still owes. */
  private rejectAll(reason: string, refused?: () => Error): void {
    const owed = new Map<Group, Envelope[]>();
    for (let i = this.head; i < this.queue.length; i++) {
      const out = this.queue[i] as Outgoing;
      const list = owed.get(out.group) ?? [];
      list.push(out.envelope);
      owed.set(out.group, list);
    }
    this.queue = [];
    this.head = 0;
    this.unsent = 0;
    for (const [group, envelopes] of owed) {
      group.reject(refused?.() ?? new HubUnavailableError(reason, envelopes));
    }
    for (const group of this.whenOpen.splice(0)) {
      group.reject(refused?.() ?? new HubUnavailableError(reason, []));
    }
  }
}
