import type { Catalog, CatalogEntry, Engram } from "../../schema/engram.js";
import { describeWorker, errorIsNotable } from "../compaction/telemetry.js";
import { normalizeClaim } from "../graph/learnings.js";
import { engramPath } from "../model/engram.js";
import { compareText, truncateChars } from "../model/text.js";
import { documentItems, type FocusDocuments } from "./focus-documents.js";
import { focusMarker, footerLine, headerVariants } from "./focus-header.js";
import { clean, FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

export type { FocusDocument, FocusDocuments } from "./focus-documents.js";
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
  /** Core and state documents of consolidated sessions: shown first, core before state. */
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

const TITLE_MAX_CHARS = 120;
const ERROR_TYPE_MAX_CHARS = 80;

type SectionKey = "core" | "state" | "decisions" | "lt" | "recent" | "problems" | "now";

const TELEMETRY_SECTIONS: ReadonlySet<SectionKey> = new Set(["problems", "now"]);

const SECTION_HEADINGS: Record<SectionKey, string> = {
  core: "## Core",
  state: "## State",
  decisions: "## Decisions",
  lt: "## Long-term",
  recent: "## Recent",
  problems: "## Open problems",
  now: "## Now",
};

interface Item {
  section: SectionKey;
  line: string;
}

interface Shown {
  engram: Engram;
  path: string;
}

/**
 * Renders MEMORY.md from the catalog and the loaded engrams. Pure and deterministic: the same
 * input gives the same bytes, whatever the insertion order of `engrams`.
 */
export function renderFocus(input: FocusInput): FocusView {
  return renderFocusOn(engramPart(input.catalog.entries, input.engrams), input);
}

/** What the view takes from the catalog's entries and the engrams: the bulk of its work. */
interface EngramPart {
  entries: readonly CatalogEntry[];
  sealed: number;
  items: readonly Item[];
}

function engramPart(
  catalogEntries: readonly CatalogEntry[],
  engrams: ReadonlyMap<string, Engram>,
): EngramPart {
  const entries = uniqueEntries(catalogEntries);
  const { shown, sealed } = resolveEngrams(entries, engrams);
  return { entries, sealed, items: collectItems(shown) };
}

function renderFocusOn(part: EngramPart, input: Omit<FocusInput, "engrams">): FocusView {
  const maxBytes = budget(input.maxBytes);
  const maxItems = budget(input.maxItems);
  const { entries, sealed } = part;
  const collected = [...documentItems(input.documents), ...part.items];
  for (const line of input.now ?? []) {
    const text = clean(line);
    if (text !== "")
      collected.push({ section: "now", line: `- ${truncateChars(text, FOCUS_ITEM_MAX_CHARS)}` });
  }
  // Telemetry sections come last and share a small budget; what they leave out is omitted.
  let telemetryRoom = telemetryItemBudget(maxItems);
  const items = collected.filter(
    (item) => !TELEMETRY_SECTIONS.has(item.section) || telemetryRoom-- > 0,
  );
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

/**
 * Which catalog entries the renderer wants loaded: LT entries and the most recent ST entries,
 * newest first, at most `limit`. Lets the caller avoid reading every engram file. When both
 * tiers have more than fit, ST (the current focus) keeps at least half of the slots.
 */
export function focusCandidates(catalog: Catalog, limit: number): CatalogEntry[] {
  const max = budget(limit);
  const entries = uniqueEntries(catalog.entries);
  const lt = entries.filter((e) => e.scope === "lt").sort(newestFirst);
  const st = entries.filter((e) => e.scope === "st").sort(newestFirst);
  const stWanted = Math.min(st.length, Math.ceil(max / 2));
  const ltTaken = Math.min(lt.length, max - stWanted);
  const stTaken = Math.min(st.length, max - ltTaken);
  return [...lt.slice(0, ltTaken), ...st.slice(0, stTaken)].sort(newestFirst);
}

function budget(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * Version descending (batch ids sort as text), then part ascending (a group split by size
 * keeps its order: a history import lists its newest decisions in part 1), then engram_id.
 */
function newestFirst(
  a: { version: string; engram_id: string; provenance?: Record<string, unknown> },
  b: { version: string; engram_id: string; provenance?: Record<string, unknown> },
): number {
  return (
    compareText(b.version, a.version) ||
    partOf(a) - partOf(b) ||
    compareText(a.engram_id, b.engram_id)
  );
}

function partOf(e: { provenance?: Record<string, unknown> }): number {
  const part = e.provenance?.part;
  return typeof part === "number" ? part : 1;
}

/** Entries by engram_id, first of any duplicate id (the catalog rejects them anyway). */
function uniqueEntries(entries: readonly CatalogEntry[]): CatalogEntry[] {
  const sorted = [...entries].sort(
    (a, b) => compareText(a.engram_id, b.engram_id) || compareText(a.path, b.path),
  );
  return sorted.filter((e, i) => i === 0 || sorted[i - 1]?.engram_id !== e.engram_id);
}

function resolveEngrams(
  entries: readonly CatalogEntry[],
  engrams: ReadonlyMap<string, Engram>,
): { shown: Shown[]; sealed: number } {
  const shown: Shown[] = [];
  let sealed = 0;
  for (const entry of entries) {
    const engram = engrams.get(entry.engram_id);
    // A stale or foreign engram would make the view lie about the catalog it names.
    if (!engram || engram.engram_id !== entry.engram_id || engram.hash !== entry.hash) continue;
    // Sealed text is never printed (it is not in facts); an engram that is sensitive as a
    // whole is left out, while one that merely carries sealed notes shows its clear facts.
    if ((engram.sealed?.length ?? 0) > 0 || engram.privacy === "sensitive") sealed++;
    if (engram.privacy === "sensitive") continue;
    shown.push({ engram, path: engramPath(engram.scope, engram.version, engram.engram_id) });
  }
  return { shown, sealed };
}

function collectItems(shown: readonly Shown[]): Item[] {
  const items: Item[] = [];
  const seen = new Set<string>();
  const add = (section: SectionKey, keys: readonly string[], line: string): void => {
    if (keys.some((k) => seen.has(k))) return;
    for (const k of keys) seen.add(k);
    items.push({ section, line });
  };
  const byNewest = (a: Shown, b: Shown) => newestFirst(a.engram, b.engram);
  const lt = shown.filter((s) => s.engram.scope === "lt").sort(byNewest);
  const st = shown.filter((s) => s.engram.scope === "st").sort(byNewest);

  for (const s of [...lt, ...st]) {
    for (const d of s.engram.decisions) {
      const title = clean(d.title);
      if (title === "") continue;
      const rationale = clean(d.rationale);
      const shownTitle = truncateChars(title, TITLE_MAX_CHARS);
      const room = FOCUS_ITEM_MAX_CHARS - codePoints(shownTitle) - 2;
      const body =
        rationale === ""
          ? `**${shownTitle}**`
          : `**${shownTitle}**: ${truncateChars(rationale, room)}`;
      // The bare title is a key too: a fact repeating a decision's title adds nothing.
      add(
        "decisions",
        [normalizeClaim(title), normalizeClaim(`${title}: ${rationale}`)],
        itemLine(body, s),
      );
    }
  }
  for (const firm of [true, false]) for (const s of lt) addFacts("lt", s, firm, add);

  // High-signal ST engrams first: lessons, incidents and decisions are what the focus is for.
  const signal = (e: Engram) => e.signals.lessons + e.signals.incidents + e.signals.decisions > 0;
  const recent = [...st].sort(
    (a, b) => Number(signal(b.engram)) - Number(signal(a.engram)) || byNewest(a, b),
  );
  // Tentative facts (questions, telemetry, low confidence) rank below every firm one.
  for (const firm of [true, false]) for (const s of recent) addFacts("recent", s, firm, add);

  // Telemetry only where it matters: a stalled or blocked worker, newest report first.
  for (const s of [...shown].sort(byNewest)) {
    for (const w of s.engram.telemetry?.workers ?? []) {
      const fact = describeWorker(w);
      if (fact !== undefined) {
        const text = truncateChars(clean(fact), FOCUS_ITEM_MAX_CHARS);
        add(
          "problems",
          [`worker:${normalizeClaim(w.worker)}`, normalizeClaim(clean(fact))],
          itemLine(text, s),
        );
      }
    }
  }
  for (const group of errorGroups(shown)) {
    // A single transient error is no pattern: only repeated or fatal ones are problems.
    if (!errorIsNotable(group)) continue;
    const retry =
      group.retryable === null
        ? "retryable unknown"
        : group.retryable
          ? "retryable"
          : "not retryable";
    const head = `${truncateChars(group.type, ERROR_TYPE_MAX_CHARS)} ×${group.count} (${retry})`;
    const body =
      group.sample === ""
        ? head
        : `${head}: ${truncateChars(group.sample, FOCUS_ITEM_MAX_CHARS - codePoints(head) - 2)}`;
    add("problems", [`error:${normalizeClaim(group.type)}`], itemLine(body, group.at));
  }
  return items;
}

function addFacts(
  section: SectionKey,
  s: Shown,
  firm: boolean,
  add: (section: SectionKey, keys: readonly string[], line: string) => void,
): void {
  const tentative = new Set(s.engram.tentative ?? []);
  // Compaction restates error groups and worker telemetry as tentative facts: Open problems
  // shows those that matter, and the rest is not knowledge.
  const telemetryPrefixes = [
    ...(s.engram.telemetry?.errors ?? []).map((g) => `Error ${g.error_type} ×`),
    ...(s.engram.telemetry?.workers ?? []).map((w) => `Worker ${w.worker}: `),
  ];
  for (const fact of s.engram.facts) {
    if (tentative.has(fact) === firm) continue;
    if (!firm && telemetryPrefixes.some((prefix) => fact.startsWith(prefix))) continue;
    const text = clean(fact);
    if (text !== "")
      add(section, [normalizeClaim(text)], itemLine(truncateChars(text, FOCUS_ITEM_MAX_CHARS), s));
  }
}

interface ErrorSummary {
  type: string;
  count: number;
  retryable: boolean | null;
  sample: string;
  /** The newest engram reporting it: the link, the sample and retryability come from there. */
  at: Shown;
}

/** Error groups merged by type across engrams, newest first, then most frequent. */
function errorGroups(shown: readonly Shown[]): ErrorSummary[] {
  const byType = new Map<string, ErrorSummary>();
  const newest = [...shown].sort((a, b) => newestFirst(a.engram, b.engram));
  for (const s of newest) {
    const groups = [...(s.engram.telemetry?.errors ?? [])].sort(
      (a, b) =>
        b.count - a.count ||
        compareText(a.error_type, b.error_type) ||
        compareText(a.sample, b.sample),
    );
    for (const g of groups) {
      const type = clean(g.error_type);
      if (type === "") continue;
      const key = normalizeClaim(type);
      const known = byType.get(key);
      if (known) known.count += g.count;
      else
        byType.set(key, {
          type,
          count: g.count,
          retryable: g.retryable,
          sample: clean(g.sample),
          at: s,
        });
    }
  }
  return [...byType.values()].sort(
    (a, b) =>
      newestFirst(a.at.engram, b.at.engram) || b.count - a.count || compareText(a.type, b.type),
  );
}

function itemLine(body: string, s: Shown): string {
  return `- ${body} ([${s.engram.engram_id.slice(0, 10)}](${s.path}))`;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
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
