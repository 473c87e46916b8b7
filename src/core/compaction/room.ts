/**
 * Compaction for room: an ingest about to take the buffer past a hard budget compacts the
 * oldest slice into engrams that wait, with a ledger of what was compacted, until the next
 * cycle takes them into the memory tree the repository publishes (the work tree, or the
 * staging tree of `director run --pr`). Only the engrams are made here: the catalog,
 * promotion, eviction and MEMORY.md are the cycle's, once for every compaction before it.
 */
import type { MemoryConfig } from "../../schema/config.js";
import type { Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import type { Registry } from "../../schema/registry.js";
import { entityMatcher } from "../graph/entities.js";
import { sealEngram } from "../model/engram.js";
import { type CompactionPolicy, compactSlice } from "./compact.js";
import { bodyLinker } from "./pack.js";
import type { RoomLedger } from "./room-ledger.js";

/** Most engrams one compacted slice produces; smaller groups are merged into `other`. */
export const MAX_GROUPS_PER_SLICE = 24;

/** The policy a slice is compacted with, by a cycle and by a compaction for room alike. */
export function slicePolicy(
  memory: MemoryConfig,
  entities: CompactionPolicy["entities"],
  known: CompactionPolicy["known"],
): CompactionPolicy {
  return {
    engram_max_bytes: memory.engram_max_bytes,
    stall_seconds: memory.stall_seconds,
    promote_min_confidence: memory.promote_min_confidence,
    max_groups: MAX_GROUPS_PER_SLICE,
    entities,
    known,
  };
}

export interface RoomPlan {
  engrams: Engram[];
  /** The pending file: one engram per line, in the order they were made. */
  pendingText: string;
  ledger: RoomLedger;
}

/**
 * Compacts `slice` (the oldest events) for room. Claims already in memory are not looked up
 * (that would read every engram at every compaction): the cycle that takes these engrams
 * deduplicates them by id against the catalog, as any slice's.
 */
export function planRoomCompaction(input: {
  slice: readonly MemoryEvent[];
  memory: MemoryConfig;
  registry?: Registry | undefined;
  ledger: RoomLedger;
  pendingFile: string;
}): RoomPlan {
  const matcher = input.registry ? entityMatcher(input.registry) : undefined;
  const entities = matcher ? bodyLinker(matcher) : undefined;
  const engrams = compactSlice(input.slice, slicePolicy(input.memory, entities, undefined));
  const pendingText = engrams.map((e) => `${JSON.stringify(e)}\n`).join("");
  const ledger: RoomLedger = {
    compactions: input.ledger.compactions + 1,
    events: input.ledger.events + input.slice.length,
    engrams: input.ledger.engrams + engrams.length,
    written_by_ingest: input.ledger.written_by_ingest,
    pending:
      engrams.length > 0 ? [...input.ledger.pending, input.pendingFile] : input.ledger.pending,
  };
  return { engrams, pendingText, ledger };
}

/**
 * The engrams of a pending file, each checked: its id and hash are those its content gives
 * (a damaged or forged line is refused, never written to memory).
 */
export function parsePending(text: string, parse: (value: unknown) => Engram): Engram[] | string {
  const out: Engram[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    if (raw.length === 0) continue;
    let engram: Engram;
    try {
      engram = parse(JSON.parse(raw));
    } catch (error) {
      return `line ${line}: not an engram (${(error as Error).message.split("\n")[0]})`;
    }
    const { engram_id: _, hash: __, ...body } = engram;
    const sealed = sealEngram(body);
    if (sealed.hash !== engram.hash || sealed.engram_id !== engram.engram_id) {
      return `line ${line}: ${engram.engram_id}: its id or hash does not match its content`;
    }
    out.push(engram);
  }
  return out;
}
