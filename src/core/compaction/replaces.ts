/**
 * What the new engrams of a cycle replace in memory: named by the note (`supersedes`, resolved
 * by the worker), or detected where a reversal is likely: a decision that says "instead of",
 * "replaces", "reverses", "no longer" about an item of memory, a new value for the same
 * default, or a note that retracts a convention ("retract", "no longer", "do not ..."). Each
 * becomes `{was, now}` in the engram's `replaces`; readers then show only `now`. Pure.
 */
import type { Engram, EngramBody } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { normalizeClaim, typedFact } from "../graph/learnings.js";
import { type Replacements, replacedBy, replacementsOf } from "../graph/supersession.js";
import { optionTerms } from "../history/supersede.js";
import { sealEngram } from "../model/engram.js";
import { itemTextOf } from "./group.js";

/** An item memory holds now, with the words that say what it is about. */
interface MemoryItem {
  text: string;
  decision: boolean;
  convention: boolean;
  words: Set<string>;
  /** The words of what it chose: before its own change cue ("X instead of Y": X's). */
  chosen: Set<string>;
  terms: string[];
}

const CHANGE_CUE =
  /\b(?:instead of|rather than|replac(?:e|es|ed|ing)|revers(?:e|es|ed|ing)|supersed(?:e|es|ed|ing)|no longer|switch(?:es|ed)? (?:away )?from|mov(?:e|es|ed) (?:away )?from)\b/i;
const RETRACT_CUE = /\b(?:retract(?:s|ed|ing)?|withdraw(?:s|n)?|no longer)\b/i;
const NEGATED = /^\s*(?:do not|don't|never|stop)\b/i;
const DEFAULT = /\bdefaults?\b/i;
const REPORT_PREFIX = /^(?:Lesson|Insight|Incident|Question|Pattern|Self-knowledge): /;
const STOP = new Set(
  "the a an and or of for to in on at by with from into as is are be was were this that these those it its we our use uses using used do not don't never no longer instead rather than replace replaces replaced reverse reverses reversed supersede supersedes retract retracts retracted convention decision default defaults all any now".split(
    " ",
  ),
);

/** Content words: lower case, no stop words, a plural's s dropped. */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().split(/[^a-z0-9_-]+/)) {
    const w = raw.replace(/^[-_]+|[-_]+$/g, "");
    if (w.length < 3 || STOP.has(w) || /^\d+$/.test(w)) continue;
    out.add(w.length > 4 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w);
  }
  return out;
}

function itemOf(text: string, decision: boolean): MemoryItem {
  const typed = typedFact(text);
  const words = contentWords(typed.text);
  const cue = CHANGE_CUE.exec(typed.text);
  return {
    text,
    decision,
    convention: !decision && typed.type === "convention",
    words,
    chosen: cue ? contentWords(typed.text.slice(0, cue.index)) : words,
    terms: optionTerms(typed.text),
  };
}

/** The decisions and firm facts of memory that nothing has replaced. */
function currentItems(memory: readonly Engram[], replacements: Replacements): MemoryItem[] {
  const out: MemoryItem[] = [];
  const seen = new Set<string>();
  const add = (text: string, decision: boolean, engram: Engram) => {
    const key = normalizeClaim(text);
    if (seen.has(key) || replacedBy(replacements, text, engram)) return;
    seen.add(key);
    out.push(itemOf(text, decision));
  };
  for (const engram of memory) {
    const tentative = new Set(engram.tentative ?? []);
    for (const d of engram.decisions) add(d.title, true, engram);
    for (const f of engram.facts) if (!tentative.has(f)) add(f, false, engram);
  }
  return out;
}

function shared(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let n = 0;
  for (const w of a) if (b.has(w)) n++;
  return n;
}

/**
 * The item of memory a new item likely replaces, if any. A decision with a change cue names
 * the old subject after it ("Redis instead of Postgres advisory locks"): an item holding most
 * of those words. Two decisions that both set a default and name the same option, or share
 * most of their words, are the same default with a new value. A retraction names most of the
 * convention (or decision) it takes back.
 */
export function detectReplaced(
  text: string,
  decision: boolean,
  items: readonly MemoryItem[],
): string | undefined {
  const key = normalizeClaim(text);
  const body = typedFact(text).text;
  let best: { text: string; score: number } | undefined;
  const consider = (item: MemoryItem, score: number) => {
    if (normalizeClaim(item.text) === key) return;
    if (best === undefined || score > best.score) best = { text: item.text, score };
  };
  const cue = CHANGE_CUE.exec(body);
  if (decision && cue) {
    const subject = contentWords(body.slice(cue.index + cue[0].length));
    for (const item of items) {
      if (!item.decision && !item.convention) continue;
      // What the item chose, not what it dropped: "Adopt B instead of make" does not replace
      // "Adopt A instead of make" (both left make), it replaces "Use make".
      const n = shared(subject, item.chosen);
      if (subject.size > 0 && n >= Math.min(2, subject.size) && n / subject.size >= 0.6) {
        consider(item, n / subject.size);
      }
    }
  }
  if (decision && DEFAULT.test(body)) {
    const words = contentWords(body);
    const terms = optionTerms(body);
    for (const item of items) {
      if (!item.decision || !DEFAULT.test(item.text)) continue;
      const sameTerm = terms.some((t) => item.terms.includes(t));
      const n = shared(words, item.words);
      const overlap = n / Math.max(1, Math.min(words.size, item.words.size));
      if (sameTerm || (n >= 2 && overlap >= 0.75)) consider(item, sameTerm ? 1 : overlap);
    }
  }
  const negation = NEGATED.test(body);
  // Only a convention or a plain fact retracts: a lesson or an incident reports.
  const retractable = !decision && !REPORT_PREFIX.test(text);
  if (retractable && (RETRACT_CUE.test(body) || negation)) {
    const words = contentWords(body);
    for (const item of items) {
      if (!item.convention && !item.decision) continue;
      // "Do not X" takes back "X", not "Never X": a rule stated twice is no retraction.
      if (negation && !RETRACT_CUE.test(body) && NEGATED.test(typedFact(item.text).text)) continue;
      // Most of the retraction is about the item, and it names at least half of the item.
      const n = shared(words, item.words);
      const of = n / Math.max(1, item.words.size);
      if (n >= Math.min(2, item.words.size) && of >= 0.5 && n / Math.max(1, words.size) >= 0.6) {
        consider(item, of);
      }
    }
  }
  return best?.text;
}

/**
 * Item text (claim key) -> the texts its note named in `supersedes`: what a compaction for
 * room keeps beside a group's record, so that the cycle packing it still knows.
 */
export function namedReplacements(slice: readonly MemoryEvent[]): Map<string, string[]> {
  const named = new Map<string, string[]>();
  for (const event of slice) {
    const now = event.supersedes?.length ? itemTextOf(event) : undefined;
    if (now === undefined) continue;
    const key = normalizeClaim(now);
    named.set(key, [...(named.get(key) ?? []), ...(event.supersedes ?? [])]);
  }
  return named;
}

/** Whether an engram holds an item with a cue `detectReplaced` looks for. */
function mayReplace(engram: Engram): boolean {
  if (engram.scope !== "st") return false;
  const cue = (text: string, decision: boolean) => {
    const body = typedFact(text).text;
    if (decision) return CHANGE_CUE.test(body) || DEFAULT.test(body);
    return !REPORT_PREFIX.test(text) && (RETRACT_CUE.test(body) || NEGATED.test(body));
  };
  return (
    engram.decisions.some((d) => cue(d.title, true)) || engram.facts.some((f) => cue(f, false))
  );
}

/**
 * The engrams with their `replaces` filled in, against `memory` (the engrams the catalog lists,
 * without the slice's own): what the slice's notes named in `supersedes`, when memory holds it,
 * and what `detectReplaced` finds for the other items. Engrams that replace nothing are
 * returned as they are (same bytes, same id).
 */
export function markReplaces(
  engrams: readonly Engram[],
  slice: readonly MemoryEvent[],
  memory: readonly Engram[],
  /** What notes compacted for room named (`pendingEngrams`), by the same claim key. */
  earlier: ReadonlyMap<string, readonly string[]> = new Map(),
): Engram[] {
  const named = namedReplacements(slice);
  for (const [key, texts] of earlier) named.set(key, [...(named.get(key) ?? []), ...texts]);
  // Memory's items are read only when something may replace one: most cycles skip it.
  if (memory.length === 0 || (named.size === 0 && !engrams.some(mayReplace))) return [...engrams];
  const items = currentItems(memory, replacementsOf(memory));
  if (items.length === 0) return [...engrams];
  const byKey = new Map(items.map((i) => [normalizeClaim(i.text), i.text]));
  return engrams.map((engram) => {
    if (engram.scope !== "st") return engram;
    const pairs: { was: string; now: string }[] = [];
    const seen = new Set<string>();
    const pair = (was: string, now: string) => {
      if (seen.has(`${was}\0${now}`)) return;
      seen.add(`${was}\0${now}`);
      pairs.push({ was, now });
    };
    const tentative = new Set(engram.tentative ?? []);
    const visit = (now: string, decision: boolean) => {
      const explicit = named.get(normalizeClaim(now));
      if (explicit !== undefined) {
        // Only what memory holds (and has not replaced already) is replaced.
        for (const text of explicit) {
          const was = byKey.get(normalizeClaim(text));
          if (was !== undefined && normalizeClaim(was) !== normalizeClaim(now)) pair(was, now);
        }
        return;
      }
      const was = detectReplaced(now, decision, items);
      if (was !== undefined) pair(was, now);
    };
    for (const d of engram.decisions) visit(d.title, true);
    for (const f of engram.facts) if (!tentative.has(f)) visit(f, false);
    if (pairs.length === 0) return engram;
    const { engram_id: _id, hash: _hash, ...body } = engram;
    const next: EngramBody = { ...body, replaces: [...(engram.replaces ?? []), ...pairs] };
    return sealEngram(next);
  });
}
