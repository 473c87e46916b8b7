import type { IngestCounts, InputLine } from "../ingest/ingest.js";

/**
 * What the TCP hub is given from outside: where it listens, and the parts the Director lends
 * it (an intake, a cycle, a log), so that the bus never reaches up into the Director.
 */

/** Client certificates are required when TLS is on: the certificate is the worker's pass. */
export interface HubTls {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

export interface HubOptions {
  host: string;
  port: number;
  /** Seconds between in-process Director cycles; 0 runs none. */
  cycleSeconds: number;
  tls?: HubTls | undefined;
}

/**
 * Where the hub's lines go: `push` keeps a line in memory, `flush` makes everything pushed
 * durable (one journal fsync, the group commit). Only flushed lines are acknowledged. A
 * flush that must first make room in the buffer (a compaction) returns a promise: the hub
 * reads nothing until it settles.
 */
export interface HubIntake {
  push(line: InputLine): void;
  flush(): Promise<void> | undefined;
  readonly counts: IngestCounts;
  /** What the buffer holds now (events, bytes), against its hard budgets. */
  readonly fill: { events: number; bytes: number };
  /** Told of each event stored from a line that names its `sender`, oldest first. */
  onStored: ((sender: string, bytes: number) => void) | undefined;
}

/**
 * One Director cycle, run while the hub reads nothing; resolves with the paths it wrote.
 * `makeRoom`: a sender waits past its share, so the cycle compacts whatever the soft limit.
 */
export interface HubCycleRunner {
  run(options?: { makeRoom: boolean }): Promise<{ written: readonly string[] }>;
}

/** What the hub cannot do but must say (the serve command's log). */
export interface HubLog {
  warn(message: string): void;
}

/** The parts the Director lends the hub: its intake, its cycle, its log. */
export interface HubParts {
  intake: HubIntake;
  cycles?: HubCycleRunner | undefined;
  log: HubLog;
}

export interface HubSummary extends IngestCounts {
  listening: string;
  stopped_by: string;
  connections: number;
  refused: number;
  /** Of `refused`: connections over `agent_bus.max_connections`. */
  refused_at_cap: number;
  /** Connections the system would not let the hub take (EMFILE, ENFILE...): closed unread. */
  accept_errors: number;
  /** Times a sender past `agent_bus.sender_share` was held back until a compaction. */
  held_back: number;
  dropped_silent: number;
  acknowledged: number;
  commits: number;
  cycles: number;
}

/** The summary `director serve` prints: the hub's own figures beside its Ingestor's counts. */
export function hubSummary(
  listening: string,
  stoppedBy: string,
  stats: Omit<HubSummary, keyof IngestCounts | "listening" | "stopped_by">,
  c: IngestCounts,
  extra: { quarantined: number; redacted: number },
): HubSummary {
  return {
    listening,
    stopped_by: stoppedBy,
    ...stats,
    accepted: c.accepted,
    duplicates: c.duplicates,
    quarantined: c.quarantined + extra.quarantined,
    redacted: c.redacted + extra.redacted,
    ...(c.surrogates_replaced !== undefined ? { surrogates_replaced: c.surrogates_replaced } : {}),
  };
}
