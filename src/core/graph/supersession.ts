import type { Engram } from "../../schema/engram.js";
import { compareText } from "../model/text.js";
import { normalizeClaim } from "./learnings.js";

/**
 * Which items of memory a later item replaced (an engram's `replaces`), so that readers show
 * only the current side. An item is replaced when an engram no older than the item's own
 * names it as `was`: said again in a newer batch, it is current again. Pure.
 */

/** The item that replaced another, and the engram that says so. */
export interface Replacement {
  now: string;
  engram_id: string;
  version: string;
}

/** Claim key of each replaced item -> its newest replacement. */
export type Replacements = ReadonlyMap<string, Replacement>;

export function replacementsOf(
  engrams: Iterable<Pick<Engram, "engram_id" | "version" | "replaces">>,
): Replacements {
  const out = new Map<string, Replacement>();
  for (const engram of engrams) {
    for (const { was, now } of engram.replaces ?? []) {
      const key = normalizeClaim(was);
      const seen = out.get(key);
      const newer =
        seen === undefined ||
        compareText(engram.version, seen.version) > 0 ||
        (engram.version === seen.version && compareText(engram.engram_id, seen.engram_id) < 0);
      if (newer) out.set(key, { now, engram_id: engram.engram_id, version: engram.version });
    }
  }
  return out;
}

/** The replacement of an item (a decision's title, a fact as written) held by `engram`. */
export function replacedBy(
  replacements: Replacements,
  text: string,
  engram: Pick<Engram, "engram_id" | "version">,
): Replacement | undefined {
  if (replacements.size === 0) return undefined;
  const r = replacements.get(normalizeClaim(text));
  if (r === undefined || r.engram_id === engram.engram_id) return undefined;
  return compareText(r.version, engram.version) >= 0 ? r : undefined;
}

/**
 * The engrams without the decisions and facts a later item replaced: what every reader shows
 * (MEMORY.md, recall, context, learnings, the sync targets). `by` are the engrams whose
 * `replaces` count (default: the same engrams); an engram that replaces nothing is returned
 * as it is.
 */
export function withoutReplaced<E extends Engram>(
  engrams: readonly E[],
  by: Iterable<Engram> = engrams,
): E[] {
  const replacements = replacementsOf(by);
  if (replacements.size === 0) return [...engrams];
  return engrams.map((engram) => {
    const current = (text: string) => !replacedBy(replacements, text, engram);
    const decisions = engram.decisions.filter((d) => current(d.title));
    const facts = engram.facts.filter(current);
    if (decisions.length === engram.decisions.length && facts.length === engram.facts.length) {
      return engram;
    }
    return { ...engram, decisions, facts };
  });
}
