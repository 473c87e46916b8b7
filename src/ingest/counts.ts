/** What an ingest reports; apart from the Ingestor, for commands that report without ingesting. */

export interface IngestCounts {
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
  /** Lone surrogates (invalid UTF-16) replaced by U+FFFD in accepted text; absent when none. */
  surrogates_replaced?: number;
}

/** What one drain of a networked bus source brought into the buffer. */
export interface SourceDrain extends IngestCounts {
  source: string;
  /** Messages acknowledged to the source (or refs pruned) after the journal fsync. */
  acknowledged: number;
  /**
   * Messages the source dropped before this Director was given them (a NATS stream's
   * `max_age`): lost, and said so. Absent when none.
   */
  dropped?: number;
  /** Why the source could not be drained (`director run` goes on with its cycle). */
  error?: string;
}

export function zeroCounts(): IngestCounts {
  return { accepted: 0, duplicates: 0, quarantined: 0, redacted: 0 };
}
