/**
 * What MEMORY.md takes from the engrams: which catalog entries it wants loaded, and the
 * bullet lines of its Decisions, Long-term, Recent and Open problems sections, in priority
 * order. `focus.ts` lays them out within the budgets.
 */
import type { Catalog, CatalogEntry, Engram } from "../../schema/engram.js";
import { describeWorker, errorIsNotable } from "../compaction/telemetry.js";
import { normalizeClaim } from "../graph/learnings.js";
import { withoutReplaced } from "../graph/supersession.js";
import { hasContent, reasonOf } from "../history/content.js";
import { isEarlierHistory, isHistoryImport } from "../history/kinds.js";
import { engramPath } from "../model/engram.js";
import { compareText, truncateChars } from "../model/text.js";
import { clean, codePoints, decisionBody, FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

const ERROR_TYPE_MAX_CHARS = 80;

export type SectionKey =
  | "core"
  | "state"
  | "decisions"
  | "lt"
  | "recent"
  | "areas"
  | "problems"
  | "now";

export interface Item {
  section: SectionKey;
  line: string;
}

interface Shown {
  engram: Engram;
  path: string;
}

/** What the view takes from the catalog's entries and the engrams: the bulk of its work. */
export interface EngramPart {
  entries: readonly CatalogEntry[];
  sealed: number;
  items: readonly Item[];
}

export function engramPart(
  catalogEntries: readonly CatalogEntry[],
  engrams: ReadonlyMap<string, Engram>,
): EngramPart {
  const entries = uniqueEntries(catalogEntries);
  const { shown, sealed } = resolveEngrams(entries, engrams);
  return { entries, sealed, items: collectItems(shown) };
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

/** A budget as a whole number: anything not positive and finite is none. */
export function budget(n: number): number {
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

/** The engrams without the items a later one replaced: the view shows only the current side. */
function currentSide(shown: readonly Shown[]): Shown[] {
  const current = withoutReplaced(shown.map((s) => s.engram));
  return shown.map((s, i) => ({ ...s, engram: current[i] as Engram }));
}

function collectItems(all: readonly Shown[]): Item[] {
  const shown = currentSide(all);
  const items: Item[] = [];
  const seen = new Set<string>();
  const add = (section: SectionKey, keys: readonly string[], line: string): void => {
    if (keys.some((k) => seen.has(k))) return;
    for (const k of keys) seen.add(k);
    items.push({ section, line });
  };
  const byNewest = (a: Shown, b: Shown) => newestFirst(a.engram, b.engram);
  // What a history import found the history moved past stays in memory, out of the briefing.
  const briefed = shown.filter((s) => !isEarlierHistory(s.engram));
  const lt = briefed.filter((s) => s.engram.scope === "lt").sort(byNewest);
  const st = briefed.filter((s) => s.engram.scope === "st").sort(byNewest);

  for (const s of [...lt, ...st]) {
    const history = isHistoryImport(s.engram);
    for (const d of s.engram.decisions) {
      const title = clean(d.title);
      // An imported reason that is only "closes #12" is no reason (the commit is linked).
      const rationale = history ? clean(reasonOf(d.rationale, d.title) ?? "") : clean(d.rationale);
      const body = decisionBody(title, rationale);
      if (body === undefined || !saysSomething(title)) continue;
      if (history && !hasContent(title)) continue;
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
  // Where the work happens: a history import's areas, most recently active first.
  for (const s of briefed) {
    if (!isHistoryImport(s.engram)) continue;
    for (const fact of s.engram.tentative ?? []) {
      const text = clean(fact);
      if (text.startsWith("Area ") && hasContent(text))
        add(
          "areas",
          [normalizeClaim(text)],
          itemLine(truncateChars(text, FOCUS_ITEM_MAX_CHARS), s),
        );
    }
  }

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
  // A history import's tentative facts are counts (areas, merges, bumps) and proposals: the
  // areas have a section of their own, the rest belongs in `director status` and the PR.
  const history = isHistoryImport(s.engram);
  if (!firm && history) return;
  for (const fact of s.engram.facts) {
    if (tentative.has(fact) === firm) continue;
    if (!firm && telemetryPrefixes.some((prefix) => fact.startsWith(prefix))) continue;
    const text = clean(fact);
    if (history && !hasContent(text)) continue;
    if (text !== "" && saysSomething(text))
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

/**
 * Whether a line says anything once its redaction markers are set aside: a note that was
 * all secret (`API_KEY=[REDACTED:...]`) is no knowledge for the focus view.
 */
export function saysSomething(text: string): boolean {
  if (!text.includes("[REDACTED:")) return true;
  const left = text.replace(/\[REDACTED:[^\]]*\]/g, " ").replace(/\b[A-Z0-9_]+=/g, " ");
  return (left.match(/\p{L}/gu) ?? []).length >= 3;
}

function itemLine(body: string, s: Shown): string {
  return `- ${body} ([${s.engram.engram_id.slice(0, 10)}](${s.path}))`;
}
