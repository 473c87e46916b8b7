import type { Engram } from "../../schema/engram.js";
import type { EntityMatcher } from "./entities.js";
import { learningId, normalizeClaim, typedFact } from "./learnings.js";
import { replacedBy, replacementsOf } from "./supersession.js";

/** The claims memory already holds, to raise their evidence instead of adding a copy. */
export interface KnownClaims {
  /** The id of the learning a fact (with its type prefix) or a decision title restates. */
  find(text: string): string | undefined;
}

export const NO_CLAIMS: KnownClaims = { find: () => undefined };

/**
 * The learnings of `engrams` by what makes two claims one: the same normalized text (their
 * learning id), or, with a registry, the same entity-linked claim (mentions replaced by the
 * entities they name). Tentative facts are not claims. The engrams `except` names are left
 * out: a slice compacted again after a crash must give the same engrams, not evidence of
 * itself.
 */
export function knownClaims(
  engrams: Iterable<Engram>,
  matcher: EntityMatcher | undefined,
  except?: ReadonlySet<string>,
): KnownClaims {
  // Keyed by normalized text, so a lookup hashes nothing; the id is hashed once per claim.
  const byText = new Map<string, string>();
  const byClaim = new Map<string, string>();
  const add = (text: string) => {
    const typed = typedFact(text).text;
    const key = normalizeClaim(typed);
    let id = byText.get(key);
    if (id === undefined) {
      id = learningId(typed);
      byText.set(key, id);
    }
    if (matcher) {
      const claim = matcher.claimKey(typed);
      if (claim.length > 0 && !byClaim.has(claim)) byClaim.set(claim, id);
    }
  };
  // Sorted, so that the id a claim key maps to does not depend on the engrams' order.
  const sorted = [...engrams]
    .filter((e) => except === undefined || !except.has(e.engram_id))
    .sort((a, b) => (a.engram_id < b.engram_id ? -1 : a.engram_id > b.engram_id ? 1 : 0));
  // What a later item replaced is no claim of memory: said again, it is new (current again).
  const replacements = replacementsOf(sorted);
  const current = (text: string, engram: Engram) => !replacedBy(replacements, text, engram);
  for (const engram of sorted) {
    const tentative = new Set(engram.tentative ?? []);
    for (const fact of engram.facts) if (!tentative.has(fact) && current(fact, engram)) add(fact);
    for (const decision of engram.decisions)
      if (current(decision.title, engram)) add(decision.title);
  }
  if (byText.size === 0) return NO_CLAIMS;
  return {
    find(text) {
      const typed = typedFact(text).text;
      const id = byText.get(normalizeClaim(typed));
      if (id !== undefined) return id;
      return matcher && byClaim.size > 0 ? byClaim.get(matcher.claimKey(typed)) : undefined;
    },
  };
}
