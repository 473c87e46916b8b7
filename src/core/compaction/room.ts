/**
 * Compaction for room: an ingest about to take the buffer past a hard budget compacts the
 * oldest slice into what waits, with a ledger of what was compacted, until the next cycle
 * takes it into the memory tree the repository publishes (the work tree, or the staging tree
 * of `director run --pr`). A slice leaves the records of its groups (see group.ts) and the
 * engrams of its history events; the cycle joins each group's records across compactions and
 * packs them once, so a budget that makes many small slices makes the engrams of one (as many
 * files, each group once). The catalog, promotion, eviction and MEMORY.md are the cycle's.
 */
import type { MemoryConfig } from "../../schema/config.js";
import type { Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import type { Registry } from "../../schema/registry.js";
import { PendingGroupLine } from "../../schema/room-group.js";
import { entityMatcher } from "../graph/entities.js";
import { sha256Hex } from "../model/canonical.js";
import { compareText } from "../model/text.js";
import { sliceGroups } from "./compact.js";
import { collectGroup, type GroupState, packGroup } from "./group.js";
import { joinGroups } from "./group-join.js";
import { bodyLinker } from "./pack.js";
import type { CompactionPolicy } from "./policy.js";
import { namedReplacements } from "./replaces.js";
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

/** What one compaction for room leaves: its history engrams and its groups' records. */
export interface PendingContent {
  engrams: Engram[];
  groups: PendingGroup[];
}

/** A group's record and the batch its slice went to. */
export interface PendingGroup {
  version: string;
  group: GroupState;
  /** What the group's notes named in `supersedes`: item claim key -> texts (replaces.ts). */
  supersedes?: [string, string[]][];
}

export interface RoomPlan extends PendingContent {
  /** The pending file: one engram or group record per line, in the order they were made. */
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
  const earlier = new Map(input.ledger.labels);
  const made = sliceGroups(input.slice, slicePolicy(input.memory, entities, undefined), earlier);
  const engrams = made?.history ?? [];
  const groups = (made?.live ?? []).map(([label, events]): PendingGroup => {
    const named = [...namedReplacements(events)].sort((a, b) => compareText(a[0], b[0]));
    return {
      version: made?.version as string,
      group: collectGroup(label, events, input.memory),
      ...(named.length > 0 ? { supersedes: named } : {}),
    };
  });
  const pendingText = [
    ...engrams.map((e) => `${JSON.stringify(e)}\n`),
    ...groups.map((g) => `${JSON.stringify(g)}\n`),
  ].join("");
  const file = { file: input.pendingFile, sha256: sha256Hex(pendingText) };
  const any = engrams.length + groups.length > 0;
  for (const { group } of groups) {
    earlier.set(group.label, (earlier.get(group.label) ?? 0) + group.events);
  }
  const ledger: RoomLedger = {
    compactions: input.ledger.compactions + 1,
    events: input.ledger.events + input.slice.length,
    engrams: input.ledger.engrams + engrams.length,
    groups: input.ledger.groups + groups.length,
    labels: [...earlier.entries()].sort((a, b) => compareText(a[0], b[0])),
    written_by_ingest: input.ledger.written_by_ingest,
    pending: any ? [...input.ledger.pending, file] : input.ledger.pending,
  };
  return { engrams, groups, pendingText, ledger };
}

/**
 * The engrams of what compactions for room left, oldest first, and how many its groups
 * made: the history engrams as they are, then each group's records joined across the
 * compactions and packed once, in the batch of the latest slice that held the group. Pure:
 * the same pending content, memory settings and linker give the same engrams, so a cycle
 * run again after a crash makes the same files.
 */
export function pendingEngrams(
  contents: readonly PendingContent[],
  memory: MemoryConfig,
  entities: CompactionPolicy["entities"],
): { engrams: Engram[]; fromGroups: number; supersedes: Map<string, string[]> } {
  const out: Engram[] = contents.flatMap((c) => c.engrams);
  const pending = contents.flatMap((c) => c.groups);
  const kept = keptLabels(pending);
  const byLabel = new Map<string, PendingGroup[]>();
  for (const g of pending) {
    const label = kept.has(g.group.label) ? g.group.label : "other";
    const list = byLabel.get(label);
    if (list) list.push(g);
    else byLabel.set(label, [g]);
  }
  const policy = slicePolicy(memory, entities, undefined);
  const made: Engram[] = [];
  for (const [label, list] of byLabel) {
    const version = list.map((g) => g.version).reduce((a, b) => (b > a ? b : a));
    const joined = joinGroups(list.map((g) => g.group));
    const group = joined.label === label ? joined : { ...joined, label };
    made.push(...packGroup(group, version, policy));
  }
  // In id order, as a slice's engrams are.
  made.sort((a, b) => compareText(a.engram_id, b.engram_id));
  // The names travel beside the engrams: the cycle marks what they replace (markReplaces).
  const supersedes = new Map<string, string[]>();
  for (const g of contents.flatMap((c) => c.groups)) {
    for (const [key, texts] of g.supersedes ?? []) {
      supersedes.set(key, [...(supersedes.get(key) ?? []), ...texts]);
    }
  }
  return { engrams: [...out, ...made], fromGroups: made.length, supersedes };
}

/**
 * The labels whose records keep an engram of their own once joined: all of them when they
 * are few, else the largest `MAX_GROUPS_PER_SLICE - 1` by events over every compaction (ties
 * by label), the rest joining `other`, as one slice of the whole stream would. Each slice
 * caps its own groups, but many small slices keep different labels, and without this cap a
 * tight buffer made several times the roomy run's groups (103 labels to 26 on the bench's
 * room stream).
 */
function keptLabels(groups: readonly PendingGroup[]): Set<string> {
  const size = new Map<string, number>();
  for (const { group } of groups)
    size.set(group.label, (size.get(group.label) ?? 0) + group.events);
  if (size.size <= MAX_GROUPS_PER_SLICE) return new Set(size.keys());
  const largest = [...size]
    .filter(([label]) => label !== "other")
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]));
  return new Set(largest.slice(0, MAX_GROUPS_PER_SLICE - 1).map(([label]) => label));
}

/** The entity linker of engram bodies for `registry` (undefined: no registry, no entities). */
export function roomLinker(registry: Registry | undefined): CompactionPolicy["entities"] {
  return registry ? bodyLinker(entityMatcher(registry)) : undefined;
}

/**
 * What a pending file holds. Its bytes must hash to the digest the ledger holds (a torn,
 * damaged or swapped file is refused, never written to memory); each line must be an
 * engram's shape or a group's record (checked field by field: the state folder is input).
 * The cycle that takes them checks nothing more than it checks of the buffer's events (the
 * content hash is the ledger's, so no engram is hashed again).
 */
export function parsePending(text: string, digest: string): PendingContent | string {
  if (sha256Hex(text) !== digest) return "its bytes do not match the sha256 the ledger holds";
  const out: PendingContent = { engrams: [], groups: [] };
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
    if (typeof value === "object" && value !== null && "group" in value) {
      const parsed = PendingGroupLine.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return `line ${line}: ${["group", ...(issue?.path ?? []).map(String)].join(".")}: ${issue?.message ?? "not a group record"}`;
      }
      out.groups.push(parsed.data as PendingGroup);
      continue;
    }
    const problem = shapeProblem(value);
    if (problem !== undefined) return `line ${line}: ${problem}`;
    out.engrams.push(value as Engram);
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
