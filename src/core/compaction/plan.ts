import type { MemoryConfig } from "../../schema/config.js";
import type { Catalog, CatalogEntry, Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import type { Registry } from "../../schema/registry.js";
import { knownClaims } from "../graph/claims.js";
import { type EntityMatcher, entityMatcher } from "../graph/entities.js";
import {
  catalogEntryFor,
  sealCatalog,
  serializeCatalog,
  serializeEngram,
} from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH } from "../model/paths.js";
import { compareText } from "../model/text.js";
import { batchIdFromIso } from "../model/time.js";
import { type FocusDocuments, renderFocusFor } from "../rendering/focus.js";
import { planEviction, type TierUsage, tierUsage } from "./budget.js";
import { compactSlice, sliceVersion } from "./compact.js";
import { fitEngrams } from "./fit.js";
import { bodyLinker } from "./pack.js";
import { planPromotion } from "./promote.js";
import { markReplaces } from "./replaces.js";
import { slicePolicy } from "./room.js";

export interface CycleInput {
  /** The oldest events, chosen by `decideCompaction`; may be empty. */
  slice: readonly MemoryEvent[];
  /**
   * Engrams compacted for room since the last cycle (older than the slice): new ST engrams
   * like the slice's own, taken into the catalog, promotion, eviction and MEMORY.md here.
   */
  pending?: readonly Engram[];
  /** What the notes behind `pending` named in `supersedes` (`pendingEngrams`). */
  pendingSupersedes?: ReadonlyMap<string, readonly string[]>;
  catalog: Catalog;
  /** Every engram the catalog lists, loaded (promotion and the focus view read them). */
  engrams: ReadonlyMap<string, Engram>;
  recalls: ReadonlyMap<string, number>;
  memory: MemoryConfig;
  /** The cycle's time: the newest receipt stamp the Director has seen (never a clock). */
  asOf: string;
  /** The "Now" lines of MEMORY.md (periodic and hybrid cadence). */
  now?: readonly string[];
  /** Core and state documents of consolidated sessions, shown first in MEMORY.md. */
  documents?: FocusDocuments;
  /** People, projects and components engrams link to (absent: no `entities` are written). */
  registry?: Registry | undefined;
  /** What the batch of this Director's last compaction held once it was done (see `BatchRecord`). */
  lastBatch?: BatchRecord | undefined;
}

/**
 * The batch (a second) a cycle compacted into, and the engrams of that batch memory held
 * when the cycle was done. A slice ending in the same second compares itself with those as
 * with any earlier memory; any other engram of its batch can only be its own, written by a
 * run of this slice whose end was lost (a crash after the memory branch was pushed and
 * before the state was saved), and is left out, so that the slice gives the same engrams
 * again instead of evidence of itself.
 */
export interface BatchRecord {
  version: string;
  /** Engram ids, sorted. */
  engrams: string[];
}

export interface FileWrite {
  path: string;
  text: string;
}

export interface CyclePlan {
  catalog: Catalog;
  catalogChanged: boolean;
  written: Engram[];
  evicted: CatalogEntry[];
  compactedEvents: number;
  promoted: Engram[];
  writes: FileWrite[];
  deletes: string[];
  focus: { bytes: number; items: number; omitted: number };
  tiers: { before: Record<"st" | "lt", TierUsage>; after: Record<"st" | "lt", TierUsage> };
  /** Mentions in the new engrams that name nothing known (an @handle): logged, not linked. */
  unlinked: string[];
  /** The record for the next cycle (absent for an empty slice: the last one stands). */
  batch?: BatchRecord;
}

/**
 * One Director cycle as a value: compaction of the slice, promotion, eviction, the new
 * catalog and MEMORY.md. Applying the plan is the caller's job (and is idempotent).
 */
export function planCycle(input: CycleInput): CyclePlan {
  const { memory } = input;
  const max = memory.engram_max_bytes;
  const matcher = input.registry ? entityMatcher(input.registry) : undefined;
  const entities = matcher ? bodyLinker(matcher) : undefined;
  const version = sliceVersion(input.slice);
  // Dedup before create: what memory already says is not restated. The slice's own engrams
  // are left out, so a slice compacted again after a lost end converges to the same engrams.
  const own = version === undefined ? undefined : ownEngrams(input, version);
  const claims = own === undefined ? undefined : knownClaims(input.engrams.values(), matcher, own);
  // What the new notes replace is read against the same memory (see replaces.ts).
  const memoryEngrams = [...input.engrams.values()].filter((e) => !own?.has(e.engram_id));
  const compacted = markReplaces(
    [...(input.pending ?? []), ...compactSlice(input.slice, slicePolicy(memory, entities, claims))],
    input.slice,
    memoryEngrams,
    input.pendingSupersedes,
  );
  const known = new Set(input.catalog.entries.map((e) => e.engram_id));
  // A re-run after a crash recomputes the same engrams: those already listed are not new.
  // Engrams compacted for room come first (their events are older), each id once.
  const fresh: Engram[] = [];
  const seen = new Set<string>();
  // Every engram written is within the budget, however it was made (see fit.ts).
  const made = fitEngrams(compacted, max, entities);
  for (const engram of made) {
    if (known.has(engram.engram_id) || seen.has(engram.engram_id)) continue;
    seen.add(engram.engram_id);
    fresh.push(engram);
  }
  const all = new Map(input.engrams);
  for (const engram of fresh) all.set(engram.engram_id, engram);

  const st = [...all.values()].filter((e) => e.scope === "st");
  const lt = [...all.values()].filter((e) => e.scope === "lt");
  const promotion = planPromotion({
    st,
    lt,
    recalls: input.recalls,
    version: batchIdFromIso(input.asOf),
    createdAt: input.asOf,
    policy: memory,
    entities,
  });
  const promoted = fitEngrams(promotion, max, entities).filter(
    (e) => !known.has(e.engram_id) && !all.has(e.engram_id),
  );
  for (const engram of promoted) all.set(engram.engram_id, engram);

  const texts = new Map<string, string>();
  const newEntries: CatalogEntry[] = [];
  for (const engram of [...fresh, ...promoted]) {
    const text = serializeEngram(engram);
    texts.set(engram.engram_id, text);
    newEntries.push(catalogEntryFor(engram, Buffer.byteLength(text, "utf8")));
  }
  const candidateEntries = [...input.catalog.entries, ...newEntries];
  const evicted = planEviction(candidateEntries, {
    st: { maxBytes: memory.st_max_total_bytes, maxFiles: memory.st_max_files },
    lt: { maxBytes: memory.lt_max_total_bytes, maxFiles: memory.lt_max_files },
  });
  const evictedIds = new Set(evicted.map((e) => e.engram_id));
  const entries = candidateEntries.filter((e) => !evictedIds.has(e.engram_id));
  const catalogChanged = newEntries.length > 0 || evicted.length > 0;
  const catalog = catalogChanged
    ? sealCatalog(input.catalog.catalog_version + 1, input.asOf, entries, input.catalog.documents)
    : input.catalog;

  const writes: FileWrite[] = [];
  for (const entry of newEntries) {
    if (evictedIds.has(entry.engram_id)) continue;
    writes.push({ path: entry.path, text: texts.get(entry.engram_id) as string });
  }
  const deletes = evicted.filter((e) => known.has(e.engram_id)).map((e) => e.path);
  if (catalogChanged) writes.push({ path: CATALOG_PATH, text: serializeCatalog(catalog) });

  const focus = renderFocusFor(catalog, all, memory, input.now, input.documents);
  writes.push({ path: FOCUS_PATH, text: focus.text });

  return {
    catalog,
    catalogChanged,
    written: [...fresh, ...promoted].filter((e) => !evictedIds.has(e.engram_id)),
    evicted: evicted.filter((e) => known.has(e.engram_id)),
    compactedEvents: input.slice.length,
    promoted: promoted.filter((e) => !evictedIds.has(e.engram_id)),
    writes,
    deletes,
    focus: { bytes: focus.bytes, items: focus.items, omitted: focus.omitted },
    tiers: { before: tierUsage(input.catalog.entries), after: tierUsage(catalog.entries) },
    unlinked: matcher ? unlinkedMentions(fresh, matcher) : [],
    ...(version !== undefined ? { batch: batchRecord(catalog, version) } : {}),
  };
}

/**
 * The engrams of the slice's batch that no earlier cycle of this Director left there: only a
 * lost run of this same slice can have written them (see `BatchRecord`).
 */
function ownEngrams(input: CycleInput, version: string): Set<string> {
  const earlier = input.lastBatch?.version === version ? input.lastBatch.engrams : [];
  const own = new Set<string>();
  for (const entry of input.catalog.entries) {
    if (entry.version === version) own.add(entry.engram_id);
  }
  for (const id of earlier) own.delete(id);
  return own;
}

function batchRecord(catalog: Catalog, version: string): BatchRecord {
  const engrams = catalog.entries.filter((e) => e.version === version).map((e) => e.engram_id);
  return { version, engrams: engrams.sort(compareText) };
}

function unlinkedMentions(engrams: readonly Engram[], matcher: EntityMatcher): string[] {
  const out = new Set<string>();
  for (const e of engrams) {
    // Only text with an `@` can hold an unknown handle: the rest is not scanned again.
    const texts = [...e.facts, ...e.decisions.flatMap((d) => [d.title, d.rationale])].filter((t) =>
      t.includes("@"),
    );
    if (texts.length === 0) continue;
    for (const m of matcher.linkDocument({ texts, links: [], senders: [] }).unlinked) out.add(m);
  }
  return [...out].sort();
}
