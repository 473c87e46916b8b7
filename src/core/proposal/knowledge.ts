import type { Engram } from "../../schema/engram.js";
import { itemSaid, learningId, learningIdOfFact, normalizeClaim } from "../graph/learnings.js";
import { isHistoryImport } from "../history/kinds.js";

/** What a knowledge item is: a reviewer reads decisions, lessons and conventions differently. */
export type KnowledgeKind =
  | "decision"
  | "lesson"
  | "convention"
  | "incident"
  | "question"
  | "fact"
  | "tentative"
  | "episode";

/** One thing an engram pull request asks the team to believe, with the engram it comes from. */
export interface KnowledgeItem {
  /** The claim's id (`l_` and 16 hex digits of its normalized text): `director reject ID`. */
  id: string;
  kind: KnowledgeKind;
  /** The text without its kind's prefix (`Lesson: x` is the lesson `x`). */
  text: string;
  /** A decision's why. */
  rationale?: string;
  /** A decision's confidence, as its note stated it (absent when none was stated). */
  confidence?: number;
  engram_id: string;
  scope: "st" | "lt";
  /** What memory said that this item replaces (its engram's `replaces`), as memory said it. */
  replaces?: string[];
  /** Who said it: the item's own senders (`said_by`), else its engram's; sorted. */
  senders?: string[];
  /**
   * When it was said (ISO-8601 UTC): an episode's own time, else its engram's window end;
   * absent for a history import, whose window is the import's, not the commits'.
   */
  at?: string;
  /** A history import's item: the commits it was read from (its own links). */
  commits?: string[];
}

const PREFIXES: readonly [string, KnowledgeKind][] = [
  ["Lesson: ", "lesson"],
  ["Insight: ", "lesson"],
  ["Convention: ", "convention"],
  ["Incident: ", "incident"],
  ["Question: ", "question"],
];

/** A fact's kind, read from its prefix, and its text without the prefix. */
export function factItem(fact: string): { kind: KnowledgeKind; text: string } {
  for (const [prefix, kind] of PREFIXES) {
    if (fact.startsWith(prefix)) return { kind, text: fact.slice(prefix.length) };
  }
  return { kind: "fact", text: fact };
}

/**
 * The knowledge the given engrams hold, in engram order: decisions, facts by their prefix,
 * tentative facts and episode notes. An item stated again (the same normalized text) is
 * listed once, under the first engram that holds it: a long-term engram carries forward
 * what a short-term one in the same proposal said.
 */
export function knowledgeItems(engrams: readonly Engram[]): KnowledgeItem[] {
  const seen = new Set<string>();
  const out: KnowledgeItem[] = [];
  // An item's `now` is as its engram holds it: a fact with its prefix, a decision's title.
  const replaced = new Map<string, string[]>();
  for (const e of engrams) {
    for (const { was, now } of e.replaces ?? []) {
      const list = replaced.get(normalizeClaim(now)) ?? [];
      if (!list.includes(was)) replaced.set(normalizeClaim(now), [...list, was]);
    }
  }
  const push = (item: Omit<KnowledgeItem, "id">, stated: string = item.text) => {
    const key = normalizeClaim(item.text);
    if (seen.has(key)) return;
    seen.add(key);
    const was = replaced.get(normalizeClaim(stated));
    const withId: KnowledgeItem = { id: learningId(item.text), ...item };
    out.push(was ? { ...withId, replaces: was } : withId);
  };
  for (const e of engrams) {
    const from = { engram_id: e.engram_id, scope: e.scope };
    // Who and when, per item: what a reviewer weighs a decision by.
    const history = isHistoryImport(e);
    const said = (stated: string) => {
      const own = itemSaid(e, learningIdOfFact(stated));
      const senders = [...own.senders].sort();
      if (!history) return { senders, at: e.source_window.end_ts };
      const commits = own.links.filter((l) => l.type === "commit").map((l) => l.ref);
      return { senders, ...(commits.length > 0 ? { commits } : {}) };
    };
    for (const d of e.decisions) {
      const sure = d.confidence === undefined ? {} : { confidence: d.confidence };
      push({
        kind: "decision",
        text: d.title,
        rationale: d.rationale,
        ...sure,
        ...from,
        ...said(d.title),
      });
    }
    for (const fact of e.facts) push({ ...factItem(fact), ...from, ...said(fact) }, fact);
    // `tentative` marks facts the engram holds (never promoted): listed once, under their kind.
    const facts = new Set(e.facts);
    for (const fact of e.tentative ?? []) {
      if (!facts.has(fact)) push({ kind: "tentative", text: fact, ...from, ...said(fact) });
    }
    for (const ep of e.episodes ?? []) {
      if (ep.text === undefined) continue;
      push({ kind: "episode", text: ep.text, ...from, senders: [ep.sender], at: ep.at });
    }
  }
  return out;
}
