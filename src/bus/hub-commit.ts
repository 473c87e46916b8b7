import {
  appendQuarantine,
  type QuarantineLimits,
  type QuarantineRecord,
} from "../state/quarantine.js";
import { ackThrough, type Connection, pauseAll, resumeAll } from "./hub-connection.js";
import type { HubIntake } from "./hub-ports.js";

/**
 * The TCP hub's group commit: lines read in one turn of the event loop, from all connections,
 * are made durable by one journal fsync, then each connection is acknowledged for exactly
 * what that batch stored. A batch that would pass the buffer's hard budgets first makes room
 * (a compaction): reading pauses as for a cycle until the batch is stored and acknowledged.
 */

/**
 * The hub's one pause: a cycle, or a commit making room, holds the buffer. While it is set
 * nothing is committed and reading stays paused; whoever set it resumes reading.
 */
export interface HubPause {
  running: Promise<void> | undefined;
}

/** What the group commit needs of the hub. */
export interface CommitHost {
  readonly conns: ReadonlySet<Connection>;
  readonly intake: HubIntake;
  readonly quarantinePath: string;
  readonly quarantineLimits: QuarantineLimits;
  readonly pause: HubPause;
  readonly stats: { commits: number; acknowledged: number };
  /** The hub failed (nothing more is committed) or is stopping (reading does not resume). */
  failed(): boolean;
  stopping(): boolean;
  fail(error: unknown): void;
  /** Workers hear of the engrams a compaction for room wrote, as after a cycle. */
  announceRoomMade(): Promise<void>;
  /** The batch read so far goes to the intake now. */
  batchGiven(): void;
  /** A batch was stored and acknowledged: senders held by their share may be under it now. */
  committed(): void;
}

export class GroupCommit {
  private readonly touched = new Set<Connection>();
  private readonly quarantine: QuarantineRecord[] = [];
  private scheduled = false;

  constructor(private readonly host: CommitHost) {}

  /** `conn` sent a message into the current batch (its `pendingThrough` says up to where). */
  took(conn: Connection): void {
    this.touched.add(conn);
    this.schedule();
  }

  /** A record to append to the quarantine with the batch, before its acks. */
  quarantined(record: QuarantineRecord): void {
    this.quarantine.push(record);
  }

  private schedule(): void {
    if (this.scheduled || this.host.pause.running) return;
    this.scheduled = true;
    // After the I/O phase: everything read from every connection in this turn is one batch.
    setImmediate(() => this.commit());
  }

  /**
   * One fsync of the journal (and quarantine), then the acks. When the batch must first make
   * room, the returned promise settles once it is stored and acknowledged.
   */
  commit(): Promise<void> | undefined {
    this.scheduled = false;
    const { host } = this;
    if (host.pause.running || host.failed()) return undefined;
    if (this.touched.size > 0) host.stats.commits++;
    // What this commit stores: lines read while it makes room wait for the next one.
    const through = new Map([...this.touched].map((conn) => [conn, conn.pendingThrough]));
    this.touched.clear();
    let making: Promise<void> | undefined;
    host.batchGiven();
    try {
      making = host.intake.flush();
    } catch (error) {
      // Nothing of this batch is acknowledged; workers resend to the next hub.
      host.fail(error);
      return undefined;
    }
    if (making === undefined) {
      this.acknowledge(through);
      host.committed();
      return undefined;
    }
    pauseAll(host.conns);
    const run: Promise<void> = making
      .then(async () => {
        this.acknowledge(through);
        await host.announceRoomMade();
        // A cycle or a shutdown that started this commit goes on with the connections itself.
        if (host.pause.running !== run) return;
        host.pause.running = undefined;
        if (host.failed() || host.stopping()) return;
        resumeAll(host.conns);
        host.committed();
        if (this.touched.size > 0) this.schedule();
      })
      .catch((error: unknown) => host.fail(error));
    host.pause.running = run;
    return run;
  }

  /** After the journal fsync: the quarantine, then the acks of what was stored. */
  private acknowledge(through: ReadonlyMap<Connection, number>): void {
    try {
      if (this.quarantine.length > 0) {
        appendQuarantine(
          this.host.quarantinePath,
          this.quarantine.splice(0),
          undefined,
          this.host.quarantineLimits,
        );
      }
    } catch (error) {
      this.host.fail(error);
      return;
    }
    this.host.stats.acknowledged += ackThrough(through);
  }
}
