import type { Connection } from "./hub-connection.js";
import type { Frame } from "./protocol.js";

/**
 * One sender's share of the TCP hub's intake (issue 40): what each sender holds in the buffer,
 * and whether the hub should stop reading it. A sender is what the hub can trust of a
 * connection: its certificate under TLS, otherwise its address without the port (a worker
 * names its own id in the hello, and every new connection has a new port). While the buffer
 * is past its high-water mark (`memory.buffer_high_water_ratio`, where a compaction is due), a
 * sender holding `agent_bus.sender_share` of `buffer_max_events` or `buffer_max_bytes` is
 * read no further until a compaction brings either back under; below the mark the buffer
 * has room for everyone. Compaction takes the oldest events first, so what each sender holds
 * is kept as runs in arrival order and the oldest are let go as the buffer shrinks.
 */

export interface ShareLimits {
  maxEvents: number;
  maxBytes: number;
  /** `agent_bus.sender_share`. */
  share: number;
  /** `memory.buffer_high_water_ratio`. */
  highWater: number;
}

export interface BufferFill {
  events: number;
  bytes: number;
}

interface Held {
  events: number;
  bytes: number;
}

interface Run extends Held {
  sender: string;
}

export class IntakeShare {
  /** The events stored since the hub started, as runs of one sender, oldest first. */
  private readonly runs: Run[] = [];
  private first = 0;
  private runEvents = 0;
  private readonly holding = new Map<string, Held>();
  /** Lines taken into the batch being read, not yet given to the intake. */
  private readonly taking = new Map<string, Held>();
  private takingEvents = 0;
  private takingBytes = 0;

  constructor(private readonly limits: ShareLimits) {}

  /** A line of `sender` went into the current batch. */
  took(sender: string, bytes: number): void {
    add(this.taking, sender, 1, bytes);
    this.takingEvents++;
    this.takingBytes += bytes;
  }

  /** The current batch went to the intake: its events are counted as they are stored. */
  batchGiven(): void {
    this.taking.clear();
    this.takingEvents = 0;
    this.takingBytes = 0;
  }

  /** An event of `sender` was stored in the buffer. */
  stored(sender: string, bytes: number): void {
    const last = this.runs[this.runs.length - 1];
    if (last !== undefined && this.runs.length > this.first && last.sender === sender) {
      last.events++;
      last.bytes += bytes;
    } else {
      this.runs.push({ sender, events: 1, bytes });
    }
    this.runEvents++;
    add(this.holding, sender, 1, bytes);
  }

  /** The buffer holds `events` now: a compaction took the oldest, which no sender holds any more. */
  compacted(events: number): void {
    while (this.runEvents > events && this.first < this.runs.length) {
      const run = this.runs[this.first] as Run;
      const gone = Math.min(run.events, this.runEvents - events);
      const bytes = gone === run.events ? run.bytes : Math.round((run.bytes * gone) / run.events);
      add(this.holding, run.sender, -gone, -bytes);
      run.events -= gone;
      run.bytes -= bytes;
      this.runEvents -= gone;
      if (run.events === 0) this.first++;
    }
    if (this.first > 1024 && this.first * 2 > this.runs.length) {
      this.runs.splice(0, this.first);
      this.first = 0;
    }
  }

  /** Events `sender` holds in the buffer and in the batch being read. */
  held(sender: string): number {
    return (this.holding.get(sender)?.events ?? 0) + (this.taking.get(sender)?.events ?? 0);
  }

  /** Whether the hub should stop reading `sender`, the buffer holding `fill`. */
  over(sender: string, fill: BufferFill): boolean {
    const { maxEvents, maxBytes, share, highWater } = this.limits;
    const events = fill.events + this.takingEvents;
    const bytes = fill.bytes + this.takingBytes;
    // Past the mark as a cycle's compaction sees it (`decideCompaction`'s soft limit).
    if (events <= maxEvents * highWater && bytes <= maxBytes * highWater) return false;
    const held = this.holding.get(sender);
    const taking = this.taking.get(sender);
    const heldEvents = (held?.events ?? 0) + (taking?.events ?? 0);
    const heldBytes = (held?.bytes ?? 0) + (taking?.bytes ?? 0);
    return heldEvents >= maxEvents * share || heldBytes >= maxBytes * share;
  }
}

function add(map: Map<string, Held>, sender: string, events: number, bytes: number): void {
  const held = map.get(sender) ?? { events: 0, bytes: 0 };
  held.events += events;
  held.bytes += bytes;
  if (held.events <= 0) map.delete(sender);
  else map.set(sender, held);
}

/**
 * After a commit or a cycle: the connections held by the share go on, the sender holding
 * least first, while their sender is under it. When none is but two senders or more wait,
 * the one holding least goes on past its share (its messages make the room a compaction
 * brings): otherwise they would wait for each other. One sender waiting alone waits for the
 * next cycle, which compacts for it (`makeRoom`); `alone` (no cycles) lets it go on.
 */
export function releaseHeld(
  conns: Iterable<Connection>,
  share: IntakeShare,
  { fill, alone }: { fill: () => BufferFill; alone: boolean },
  take: (conn: Connection, frame: Frame, force: boolean) => void,
): void {
  const waiting = [...conns]
    .filter((conn) => conn.held !== undefined && conn.state === "open")
    .sort((a, b) => share.held(a.sender) - share.held(b.sender));
  let released = false;
  const release = (conn: Connection, force: boolean) => {
    const frames = conn.held as Frame[];
    conn.held = undefined;
    for (const frame of frames) take(conn, frame, force);
    conn.lastHeard = Date.now();
    if (conn.held === undefined) conn.socket.resume();
    released = true;
  };
  for (const conn of waiting) if (!share.over(conn.sender, fill())) release(conn, false);
  const first = waiting[0];
  if (!released && first && (alone || new Set(waiting.map((conn) => conn.sender)).size > 1)) {
    release(first, true);
  }
}
