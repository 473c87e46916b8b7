import type { Catalog, CatalogEntry, Engram } from "../../schema/engram.js";
import { truncateChars } from "../model/text.js";
import { documentItems, type FocusDocuments } from "./focus-documents.js";
import {
  budget,
  type EngramPart,
  engramPart,
  focusCandidates,
  type Item,
  type SectionKey,
} from "./focus-engrams.js";
import { focusMarker, footerLine, headerVariants } from "./focus-header.js";
import { clean, FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

export type { FocusDocument, FocusDocuments, FocusKnowledge } from "./focus-documents.js";
export { focusCandidates } from "./focus-engrams.js";
export { FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

/** What the MEMORY.md focus view is rendered from. */
export interface FocusInput {
  /** The catalog the view is generated from. */
  catalog: Catalog;
  /**
   * engram_id -> engram, for the entries the caller chose to load (see `focusCandidates`).
   * May be a subset: only engrams present here, and matching their catalog entry's hash, are
   * rendered.
   */
  engrams: ReadonlyMap<string, Engram>;
  /** `memory_md_max_bytes`: UTF-8 bytes of the whole text, trailing newline included. */
  maxBytes: number;
  /** `memory_md_max_items`: bullet lines (`- `). */
  maxItems: number;
  /**
   * The swarm right now, one plain line per worker (periodic and hybrid cadence): shown last,
   * under "Now", in what budget the memory items leave.
   */
  now?: readonly string[];
  /**
   * Core and state documents of consolidated sessions (shown first, core before state), and
   * their knowledge (beside the engrams' decisions and long-term facts).
   */
  documents?: FocusDocuments;
}

/** The rendered MEMORY.md: always within both budgets. */
export interface FocusView {
  text: string;
  /** Bullet lines in `text` (equals `countFocusItems(text)`). */
  items: number;
  /** UTF-8 byte length of `text`. */
  bytes: number;
  /** Distinct candidate items left out to respect the budgets. */
  omitted: number;
}

/**
 * Telemetry (stalls, blocked work, repeated or fatal errors under "Open problems", and the
 * live workers under "Now") takes at most this share of `memory_md_max_items` (at least one
 * item): MEMORY.md is knowledge first.
 */
export const FOCUS_TELEMETRY_SHARE = 0.2;

/** Items of the telemetry sections a budget of `maxItems` allows. */
export function telemetryItemBudget(maxItems: number): number {
  return Math.max(1, Math.floor(maxItems * FOCUS_TELEMETRY_SHARE));
}

const TELEMETRY_SECTIONS: ReadonlySet<SectionKey> = new Set(["problems", "now"]);

/**
 * Decisions take at most this share of `memory_md_max_items` when any other knowledge
 * (lessons, conventions, facts, areas) is there to show; alone, they take the whole view.
 */
export const FOCUS_DECISION_SHARE = 0.5;

/** A history import's areas take at most this share of `memory_md_max_items` (at least one item). */
export const FOCUS_AREA_SHARE = 0.1;

/**
 * The items a budget of `maxItems` lets each kind have, in their order: telemetry and areas
 * within their shares, decisions within theirs unless the other kinds leave room.
 */
export function shareItems(collected: readonly Item[], maxItems: number): Item[] {
  let telemetryRoom = telemetryItemBudget(maxItems);
  let areaRoom = Math.max(1, Math.floor(maxItems * FOCUS_AREA_SHARE));
  const capped = collected.filter((item) =>
    TELEMETRY_SECTIONS.has(item.section)
      ? telemetryRoom-- > 0
      : item.section !== "areas" || areaRoom-- > 0,
  );
  // A briefing, not an index: beside other knowledge, decisions keep to their share (the rest
  // stays in the engram files and recall); alone, they take the whole view.
  // Telemetry is not knowledge: beside errors alone, decisions still take the view.
  const others = capped.filter(
    (item) => item.section !== "decisions" && !TELEMETRY_SECTIONS.has(item.section),
  ).length;
  let decisionRoom = others > 0 ? Math.ceil(maxItems * FOCUS_DECISION_SHARE) : maxItems;
  return capped.filter((item) => item.section !== "decisions" || decisionRoom-- > 0);
}

const SECTION_ORDER: Record<SectionKey, number> = {
  core: 0,
  state: 1,
  decisions: 2,
  lt: 3,
  recent: 4,
  areas: 5,
  problems: 6,
  now: 7,
};

const SECTION_HEADINGS: Record<SectionKey, string> = {
  core: "## Core",
  state: "## State",
  decisions: "## Decisions",
  lt: "## Long-term",
  recent: "## Recent",
  areas: "## Areas",
  problems: "## Open problems",
  now: "## Now",
};

/**
 * Renders MEMORY.md from the catalog and the loaded engrams. Pure and deterministic: the same
 * input gives the same bytes, whatever the insertion order of `engrams`.
 */
export function renderFocus(input: FocusInput): FocusView {
  return renderFocusOn(engramPart(input.catalog.entries, input.engrams), input);
}

function renderFocusOn(part: EngramPart, input: Omit<FocusInput, "engrams">): FocusView {
  const maxBytes = budget(input.maxBytes);
  const maxItems = budget(input.maxItems);
  const { entries, sealed } = part;
  // Sessions' knowledge joins the engrams' sections: a stable sort by section keeps each
  // part's own order within a section, documents first.
  const collected = [...documentItems(input.documents), ...part.items].sort(
    (a, b) => SECTION_ORDER[a.section] - SECTION_ORDER[b.section],
  );
  for (const line of input.now ?? []) {
    const text = clean(line);
    if (text !== "")
      collected.push({ section: "now", line: `- ${truncateChars(text, FOCUS_ITEM_MAX_CHARS)}` });
  }
  // Telemetry sections come last and share a small budget, decisions and areas leave room
  // for the other kinds; what the shares leave out is omitted.
  const items = shareItems(collected, maxItems);
  const total = collected.length;

  const footerCost = (k: number): number => (k > 0 ? lineBytes("") + lineBytes(footerLine(k)) : 0);
  const marker = focusMarker(input.catalog.catalog_version, input.catalog.hash);
  const variants = headerVariants(input.catalog, marker, entries, sealed);
  // Richest header with the marker that leaves room for the footer; failing that, the richest
  // that fits at all (the last variant is empty, so one always does).
  const header =
    variants.find(
      (lines) => lines.includes(marker) && linesBytes(lines) + footerCost(total) <= maxBytes,
    ) ??
    variants.find((lines) => linesBytes(lines) <= maxBytes) ??
    [];

  const out = [...header];
  let used = linesBytes(out);
  let included = 0;
  let open: SectionKey | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    if (included + 1 > maxItems) break;
    const heading =
      item.section === open ? 0 : linesBytes(["", SECTION_HEADINGS[item.section], ""]);
    const cost = heading + lineBytes(item.line);
    // Stop (not skip) so that priority holds: nothing shown outranks something left out.
    if (used + cost + footerCost(total - included - 1) > maxBytes) break;
    if (item.section !== open) {
      out.push("", SECTION_HEADINGS[item.section], "");
      open = item.section;
    }
    out.push(item.line);
    used += cost;
    included++;
  }

  const omitted = total - included;
  if (omitted > 0 && used + footerCost(omitted) <= maxBytes) {
    out.push("", footerLine(omitted));
    used += footerCost(omitted);
  }
  const text = out.length > 0 ? `${out.join("\n")}\n` : "";
  return { text, items: included, bytes: utf8Bytes(text), omitted };
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function lineBytes(line: string): number {
  return utf8Bytes(line) + 1;
}

function linesBytes(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) n += lineBytes(line);
  return n;
}

/**
 * The part of the focus view that depends on the catalog's entries, the engrams and the item
 * budget only: the versions a run of sessions makes share it (sessions write no engrams), and
 * at 10,000 engrams it is most of the cost of a view. See `renderFocusFor`.
 */
export interface FocusBase {
  readonly from: {
    entries: readonly CatalogEntry[];
    engrams: ReadonlyMap<string, Engram>;
    maxItems: number;
  };
  readonly part: EngramPart;
}

/** The focus base of `catalog`, or `reuse` when it was made from the same entries and engrams. */
export function focusBaseFor(
  catalog: Catalog,
  engrams: ReadonlyMap<string, Engram>,
  budgets: { memory_md_max_items: number },
  reuse?: FocusBase,
): FocusBase {
  const from = { entries: catalog.entries, engrams, maxItems: budgets.memory_md_max_items };
  if (
    reuse !== undefined &&
    reuse.from.entries === from.entries &&
    reuse.from.engrams === engrams &&
    Object.is(reuse.from.maxItems, from.maxItems)
  ) {
    return reuse;
  }
  const chosen = new Map<string, Engram>();
  for (const entry of focusCandidates(catalog, from.maxItems * 4)) {
    const engram = engrams.get(entry.engram_id);
    if (engram) chosen.set(entry.engram_id, engram);
  }
  return { from, part: engramPart(catalog.entries, chosen) };
}

/**
 * The focus view of a catalog, given the engrams at hand: only those `focusCandidates`
 * names are looked up, so the caller may pass a larger map. `base`, when given, is
 * `focusBaseFor(catalog, engrams, budgets)` made earlier (for another version's catalog).
 */
export function renderFocusFor(
  catalog: Catalog,
  engrams: ReadonlyMap<string, Engram>,
  budgets: { memory_md_max_bytes: number; memory_md_max_items: number },
  now?: readonly string[],
  documents?: FocusDocuments,
  base?: FocusBase,
): FocusView {
  const { part } = focusBaseFor(catalog, engrams, budgets, base);
  return renderFocusOn(part, {
    catalog,
    maxBytes: budgets.memory_md_max_bytes,
    maxItems: budgets.memory_md_max_items,
    ...(now !== undefined ? { now } : {}),
    ...(documents !== undefined ? { documents } : {}),
  });
}
