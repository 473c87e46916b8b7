import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { quarantineExcerpt } from "../core/ingest/event-keys.js";
import { quarantineLimits } from "../core/ingest/quarantine-plan.js";
import { type Redactor, redactorFor } from "../core/ingest/redact.js";
import { batchIdFromIso } from "../core/model/time.js";
import { readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import { appendQuarantine, type QuarantineRecord } from "../state/quarantine.js";
import { HubAdmission } from "./hub-admission.js";
import { GroupCommit, type HubPause } from "./hub-commit.js";
import {
  type Connection,
  closeAll,
  dropSilent,
  JUDGE_EVERY_MS,
  openConnection,
  pauseAll,
  resumeAll,
  sendTo,
  WATCHDOG_MAX_MS,
} from "./hub-connection.js";
import { MainJudge, type WorkerView } from "./hub-drift.js";
import { heartbeatView, readHello, welcomePayload } from "./hub-hello.js";
import { announcePayload, snapshotPayload, writtenSince } from "./hub-messages.js";
import {
  type HubCycleRunner,
  type HubIntake,
  type HubOptions,
  type HubParts,
  type HubSummary,
  hubSummary,
} from "./hub-ports.js";
import { IntakeShare, releaseHeld } from "./hub-share.js";
import {
  type Frame,
  formatHostPort,
  type IncompatibilityPayload,
  MSG,
  oversizedRecord,
} from "./protocol.js";

/**
 * The Director side of the TCP agent bus. One process holds the Director state and is the
 * only writer of the buffer; every line from every connection goes through the same Ingestor
 * as `director ingest` (redaction, dedup by event_id, quarantine). Lines read in one turn of
 * the event loop, from all connections, are one group commit (`GroupCommit`): one journal
 * fsync, then each connection is acknowledged for exactly the messages that batch made durable.
 */
export class TcpHub {
  private server: Server | undefined;
  private readonly conns = new Set<Connection>();
  private readonly ingestor: HubIntake;
  private readonly redactor: Redactor;
  private readonly judge: MainJudge;
  private readonly commits: GroupCommit;
  private readonly admission: HubAdmission;
  private readonly share: IntakeShare;
  /** Set while a cycle, or a commit making room, holds the buffer: reading is paused. */
  private readonly pause: HubPause = { running: undefined };
  private cycleTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private catalog: Catalog | undefined;
  private stopping: Promise<void> | undefined;
  private failure: unknown;
  private readonly failed: Promise<void>;
  private fail: (error: unknown) => void = () => {};
  private readonly extra = { quarantined: 0, redacted: 0 };
  /** Named in every welcome (upstream's `director.run_id`): this hub's life. */
  private readonly runId = `serve-${batchIdFromIso(receiptTime())}`;
  readonly stats = {
    connections: 0,
    refused: 0,
    refused_at_cap: 0,
    accept_errors: 0,
    held_back: 0,
    dropped_silent: 0,
    acknowledged: 0,
    /** Group commits (journal fsyncs) made; acknowledged / commits is the mean batch. */
    commits: 0,
    cycles: 0,
  };
  address = "";

  constructor(
    private readonly ctx: RepoContext,
    private readonly options: HubOptions,
    private readonly parts: HubParts,
  ) {
    this.ingestor = parts.intake;
    this.redactor = redactorFor(ctx.config);
    this.judge = new MainJudge(ctx.repoDir, ctx.config.policy.sync_main);
    this.admission = new HubAdmission(ctx.config.agent_bus.max_connections, this.stats, parts.log);
    const { memory, agent_bus } = ctx.config;
    this.share = new IntakeShare({
      maxEvents: memory.buffer_max_events,
      maxBytes: memory.buffer_max_bytes,
      share: agent_bus.sender_share,
      highWater: memory.buffer_high_water_ratio,
    });
    this.ingestor.onStored = (sender, bytes) => this.share.stored(sender, bytes);
    this.commits = new GroupCommit({
      conns: this.conns,
      intake: this.ingestor,
      quarantinePath: ctx.paths.quarantine,
      quarantineLimits: quarantineLimits(ctx.config.quarantine),
      pause: this.pause,
      stats: this.stats,
      failed: () => this.failure !== undefined,
      stopping: () => this.stopping !== undefined,
      fail: (error) => this.fail(error),
      announceRoomMade: () => this.announceRoomMade(),
      batchGiven: () => this.share.batchGiven(),
      committed: () => this.release(),
    });
    this.failed = new Promise((resolve) => {
      this.fail = (error) => {
        if (this.failure === undefined) this.failure = error ?? new Error("hub failed");
        resolve();
      };
    });
  }

  /** Resolves with `HOST:PORT` once connections are accepted. */
  async start(): Promise<string> {
    this.catalog = await readCatalog(this.ctx.repoDir);
    const onSocket = (socket: Socket) => this.accept(socket);
    const { tls } = this.options;
    const server = tls
      ? createTlsServer(
          // The client certificate is checked by `HubAdmission`, which says why it refuses one.
          { ...tls, requestCert: true, rejectUnauthorized: false },
          onSocket,
        )
      : createServer(onSocket);
    // A handshake that fails (a worker that does not trust the hub): closed, nothing else.
    if (tls) server.on("tlsClientError", () => this.stats.refused++);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: this.options.host, port: this.options.port }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.admission.arm(server, (error) => this.fail(error));
    const address = server.address() as AddressInfo;
    this.address = formatHostPort(address.address, address.port);
    const ttlMs = this.ctx.config.agent_bus.heartbeat_ttl_seconds * 1000;
    this.watchdog = setInterval(
      () => {
        if (!this.pause.running) this.stats.dropped_silent += dropSilent(this.conns, ttlMs);
      },
      Math.min(WATCHDOG_MAX_MS, ttlMs / 4),
    );
    this.scheduleCycle();
    return this.address;
  }

  /** Resolves when the hub fails on its own (a journal write, a cycle); `stop()` still follows. */
  get failedOnItsOwn(): Promise<void> {
    return this.failed;
  }

  /**
   * Stops gracefully: no new connections, the cycle in progress finished, everything read so
   * far made durable and acknowledged, then every connection closed.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  summary(stoppedBy: string): HubSummary {
    return hubSummary(this.address, stoppedBy, this.stats, this.ingestor.counts, this.extra);
  }

  /** The error that stopped the hub, if one did. */
  get error(): unknown {
    return this.failure;
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.watchdog);
    clearTimeout(this.cycleTimer);
    const closed = new Promise<void>((resolve) => {
      if (this.server?.listening) this.server.close(() => resolve());
      else resolve();
    });
    await this.pause.running;
    pauseAll(this.conns);
    if (this.failure === undefined) await this.commits.commit();
    await closeAll(this.conns);
    await closed;
  }

  private accept(socket: Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    if (!this.admission.admit(socket, this.conns.size)) return;
    socket.setNoDelay(true);
    const conn = openConnection(socket, this.ctx.config.agent_bus.max_message_bytes);
    this.conns.add(conn);
    this.stats.connections++;
    if (this.pause.running) socket.pause();
    const frames: Frame[] = [];
    socket.on("data", (chunk: Buffer) => {
      conn.lastHeard = Date.now();
      conn.splitter.push(chunk, frames);
      for (const frame of frames) this.onFrame(conn, frame);
      frames.length = 0;
    });
    // A reset or a failed TLS read: the connection is gone; what it sent unacknowledged is resent.
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      conn.state = "closed";
      this.conns.delete(conn);
    });
  }

  private onFrame(conn: Connection, frame: Frame): void {
    switch (conn.state) {
      case "hello":
        this.onHello(conn, frame);
        return;
      case "judging":
        conn.early.push(frame);
        return;
      case "open":
        this.take(conn, frame);
        return;
      case "closed":
        return;
    }
  }

  private onHello(conn: Connection, frame: Frame): void {
    const hello = readHello(frame);
    if (!hello.ok) {
      if (hello.notHello) {
        // Not a hello at all: an old client or a stranger. Kept in the quarantine, then refused.
        const excerpt = quarantineExcerpt(hello.notHello.text, this.redactor);
        // Recorded before the refusal is sent: rare, and the refused worker may look at once.
        this.quarantineNow({
          received_at: receiptTime(),
          source: conn.source,
          line: 0,
          reason: "hello-expected",
          detail: `the first message on a connection must be a valid ${MSG.hello}`,
          excerpt: excerpt.text,
          bytes: hello.notHello.bytes,
        });
        this.extra.redacted += excerpt.count;
      }
      this.refuse(conn, hello.refusal);
      return;
    }
    conn.source = `tcp/${hello.senderId}@${conn.remote}`;
    conn.state = "judging";
    // Nothing more is read until the welcome: what already came in waits in `early`.
    conn.socket.pause();
    void this.welcome(conn, hello.version, hello.view);
  }

  /**
   * Welcome at once, then (judged before the first ack can be sent) any sync the worker must
   * do. The welcome waits for main's tip only (one read a second, shared): neither a drift
   * judgement (git) nor a cycle holds it, or workers that start together miss it.
   */
  private async welcome(conn: Connection, version: string, view: WorkerView): Promise<void> {
    const expected = await this.judge.expected().catch(() => undefined);
    if (this.gone(conn)) return;
    const catalog = this.catalog as Catalog;
    const bus = this.ctx.config.agent_bus;
    sendTo(conn, MSG.welcome, welcomePayload(version, this.runId, expected, catalog, bus));
    // From here on it hears of cycles (a welcome sent during one named the catalog before it).
    conn.welcomed = true;
    const verdict = await this.judgeQuietly(view);
    if (this.gone(conn)) return;
    if (verdict) sendTo(conn, MSG.syncRequired, verdict);
    // Messages behind the hello must not reach the buffer while a cycle holds it.
    while (this.pause.running) await this.pause.running;
    if (this.gone(conn)) return;
    conn.state = "open";
    const early = conn.early;
    conn.early = [];
    for (const frame of early) this.take(conn, frame);
    if (conn.held === undefined) conn.socket.resume();
  }

  /** The connection closed, or the hub is stopping: a welcome in progress goes no further. */
  private gone(conn: Connection): boolean {
    return conn.state === "closed" || this.stopping !== undefined;
  }

  private quarantineNow(record: QuarantineRecord): void {
    try {
      appendQuarantine(
        this.ctx.paths.quarantine,
        [record],
        undefined,
        quarantineLimits(this.ctx.config.quarantine),
      );
      this.extra.quarantined++;
    } catch (error) {
      this.fail(error);
    }
  }

  private refuse(conn: Connection, payload: IncompatibilityPayload): void {
    this.stats.refused++;
    sendTo(conn, MSG.incompatible, payload);
    conn.state = "closed";
    conn.socket.end();
  }

  /**
   * One worker message into the current batch; it is acknowledged after the batch's fsync.
   * A sender past its share (`IntakeShare`) is read no further: the frame waits with it.
   */
  private take(conn: Connection, frame: Frame, force = false): void {
    if (conn.held !== undefined || (!force && this.share.over(conn.sender, this.ingestor.fill))) {
      if (conn.held === undefined) {
        this.stats.held_back++;
        conn.held = [frame];
      } else conn.held.push(frame);
      conn.socket.pause();
      return;
    }
    const seq = ++conn.received;
    if (frame.kind === "oversized") {
      const { record, redactions } = oversizedRecord(
        frame,
        {
          source: conn.source,
          line: seq,
          receivedAt: receiptTime(),
          maxBytes: this.ctx.config.agent_bus.max_message_bytes,
        },
        this.redactor,
      );
      this.commits.quarantined(record);
      this.extra.quarantined++;
      this.extra.redacted += redactions;
    } else {
      this.ingestor.push({ text: frame.text, source: conn.source, line: seq, sender: conn.sender });
      this.share.took(conn.sender, frame.text.length);
      // Cheap test first: only heartbeats are parsed twice.
      if (frame.text.includes(`"${MSG.heartbeat}"`)) this.onHeartbeat(conn, frame.text);
    }
    conn.pendingThrough = seq;
    this.commits.took(conn);
  }

  private onHeartbeat(conn: Connection, text: string): void {
    // Judged at most once a second per connection: a flood of heartbeats is not a flood of git reads.
    const now = Date.now();
    if (conn.judgingHeartbeat || now < conn.nextJudgeAt) return;
    conn.nextJudgeAt = now + JUDGE_EVERY_MS;
    const view = heartbeatView(text);
    if (view === undefined) return;
    conn.judgingHeartbeat = true;
    void this.judgeQuietly(view).then((verdict) => {
      conn.judgingHeartbeat = false;
      if (verdict && conn.state === "open") sendTo(conn, MSG.syncRequired, verdict);
    });
  }

  private async judgeQuietly(view: WorkerView) {
    // A git read that fails must not cost the worker its connection: it is simply not judged.
    try {
      return await this.judge.judge(view);
    } catch (error) {
      this.parts.log.warn(`drift not judged: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** Workers hear of the engrams a compaction for room wrote, as after a cycle. */
  private async announceRoomMade(): Promise<void> {
    const before = this.catalog;
    this.catalog = await readCatalog(this.ctx.repoDir);
    const written = writtenSince(before, this.catalog);
    if (written.length > 0) this.broadcast({ written });
  }

  private scheduleCycle(): void {
    const seconds = this.options.cycleSeconds;
    const cycles = this.parts.cycles;
    if (seconds <= 0 || !cycles || this.stopping) return;
    this.cycleTimer = setTimeout(() => {
      this.pause.running = this.cycle(cycles);
    }, seconds * 1000);
  }

  /**
   * One Director cycle in process, between group commits: reading pauses, the batch so far is
   * committed, the cycle runs on the buffer this hub holds, then workers hear what changed.
   */
  private async cycle(cycles: HubCycleRunner): Promise<void> {
    const making = this.commits.commit();
    pauseAll(this.conns);
    let result: { written: readonly string[] };
    try {
      await making;
      if (this.failure !== undefined) return;
      result = await cycles.run({ makeRoom: [...this.conns].some((c) => c.held !== undefined) });
      this.catalog = await readCatalog(this.ctx.repoDir);
      this.stats.cycles++;
    } catch (error) {
      // The cycle intent is finished by the next Director to open the state: stop here.
      this.fail(error);
      return;
    } finally {
      this.pause.running = undefined;
    }
    resumeAll(this.conns);
    this.release();
    this.broadcast(result);
    this.scheduleCycle();
  }

  /** After a commit or a cycle: what the share held goes on where it may (`releaseHeld`). */
  private release(): void {
    this.share.compacted(this.ingestor.fill.events);
    if (this.pause.running || this.stopping) return;
    const fill = () => this.ingestor.fill;
    // Without cycles nothing else compacts: a sender waiting alone goes on.
    const alone = !this.parts.cycles || this.options.cycleSeconds <= 0;
    releaseHeld(this.conns, this.share, { fill, alone }, (conn, frame, force) =>
      this.take(conn, frame, force),
    );
  }

  private broadcast(result: { written: readonly string[] }): void {
    const catalog = this.catalog as Catalog;
    const announce = announcePayload(catalog, result.written);
    const snapshot = snapshotPayload(catalog);
    for (const conn of this.conns) {
      if (!conn.welcomed || conn.state === "closed") continue;
      if (announce.engrams.length > 0) sendTo(conn, MSG.announce, announce);
      sendTo(conn, MSG.catalogSnapshot, snapshot);
    }
  }
}
