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
import { sha256Hex } from "../model/canonical.js";
import { compactSlice } from "./compact.js";
import { bodyLinker } from "./pack.js";
import type { CompactionPolicy } from "./policy.js";
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
  /**
   * How bodies find their entities, when the caller keeps one linker from compaction to
   * compaction (it remembers each item it linked); otherwise one is made from `registry`.
   */
  entities?: CompactionPolicy["entities"];
  ledger: RoomLedger;
  pendingFile: string;
}): RoomPlan {
  const entities = input.entities ?? roomLinker(input.registry);
  const engrams = compactSlice(input.slice, slicePolicy(input.memory, entities, undefined));
  const pendingText = engrams.map((e) => `${JSON.stringify(e)}\n`).join("");
  const file = { file: input.pendingFile, sha256: sha256Hex(pendingText) };
  const ledger: RoomLedger = {
    compactions: input.ledger.compactions + 1,
    events: input.ledger.events + input.slice.length,
    engrams: input.ledger.engrams + engrams.length,
    written_by_ingest: input.ledger.written_by_ingest,
    pending: engrams.length > 0 ? [...input.ledger.pending, file] : input.ledger.pending,
  };
  return { engrams, pendingText, ledger };
}

/** The entity linker of engram bodies for `registry` (undefined: no registry, no entities). */
export function roomLinker(registry: Registry | undefined): CompactionPolicy["entities"] {
  return registry ? bodyLinker(entityMatcher(registry)) : undefined;
}

/**
 * The engrams of a pending file. Its bytes must hash to the digest the ledger holds (a torn,
 * damaged or swapped file is refused, never written to memory), and each line must have an
 * engram's shape; the cycle that takes them checks nothing more than it checks of the
 * buffer's events (the content hash is the ledger's, so no engram is hashed again).
 */
export function parsePending(text: string, digest: string): Engram[] | string {
  if (sha256Hex(text) !== digest) return "its bytes do not match the sha256 the ledger holds";
  const out: Engram[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    if (raw.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return `line ${line}: not JSON (${(error as Error).message})`;
    }
    const problem = shapeProblem(value);
    if (problem !== undefined) return `line ${line}: ${problem}`;
    out.push(value as Engram);
  }
  return out;
}

const STRING_ARRAYS = ["topics", "facts"] as const;

/** What a cycle relies on of an engram, checked cheaply (the full schema is `director verify`'s). */
function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not an object";
  const e = value as Record<string, unknown>;
  if (typeof e.engram_id !== "string" || !/^e_[0-9a-f]{32}$/.test(e.engram_id)) {
    return "engram_id: expected e_ and 32 hex digits";
  }
  if (e.scope !== "st") return "scope: expected st";
  if (typeof e.version !== "string" || !/^\d{8}-\d{6}Z$/.test(e.version)) {
    return "version: expected YYYYMMDD-HHMMSSZ";
  }
  if (typeof e.hash !== "string" || !/^sha256:[0-9a-f]{64}$/.test(e.hash)) {
    return "hash: expected sha256: and 64 hex digits";
  }
  for (const key of STRING_ARRAYS) {
    const list = e[key];
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string")) {
      return `${key}: expected an array of strings`;
    }
  }
  if (!Array.isArray(e.decisions) || !Array.isArray(e.links)) {
    return "decisions, links: expected arrays";
  }
  if (typeof e.provenance !== "object" || e.provenance === null)
    return "provenance: expected an object";
  return undefined;
}
