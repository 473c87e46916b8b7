import { engramFileSize } from "../model/engram.js";

/**
 * `CREATED_BY` of compact.ts, spelled here so the config check (every command) does not load
 * the compactor; a test holds them equal.
 */
export const MIN_ENGRAM_CREATED_BY = "engram-director";
let computed: number | undefined;

/**
 * A bound `minEngramBytes()` stays under (a test holds it): a config above it needs no
 * measuring, which would serialize an engram on every command's start.
 */
export const MIN_ENGRAM_BYTES_BOUND = 2048;

/**
 * The smallest file one engram can be, computed (not guessed) from the fields every engram
 * carries: the skeleton compaction writes for one note from one worker, its one fact cut as
 * far as packing ever cuts a fact (40 characters and an ellipsis, 3 UTF-8 bytes each at worst),
 * the widest stamps, counts and confidences. `[memory] engram_max_bytes` below this could hold
 * no engram at all, so the config refuses it.
 */
export function minEngramBytes(): number {
  computed ??= measure();
  return computed;
}

function measure(): number {
  const stamp = "2000-01-01T00:00:00.000Z";
  const version = "20000101-000000Z";
  return engramFileSize({
    version,
    scope: "st",
    created_at: stamp,
    source_window: { start_ts: stamp, end_ts: stamp },
    topics: [],
    facts: [`${"\u20ac".repeat(40)}…`],
    decisions: [],
    links: [],
    provenance: {
      created_by: MIN_ENGRAM_CREATED_BY,
      run_id: `compact-${version}`,
      event_count: 1,
      senders: ["w"],
      message_types: { "memory_note.v1": 1 },
    },
    privacy: "sensitive",
    signals: {
      notes: 1,
      decisions: 0,
      lessons: 0,
      incidents: 0,
      errors: 0,
      max_surprise: 0.333,
      mean_confidence: 0.333,
      redactions: 0,
      truncated: 1,
    },
  });
}
