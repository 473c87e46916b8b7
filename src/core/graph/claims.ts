import type { Engram } from "../../schema/engram.js";
import type { EntityMatcher } from "./entities.js";
import { learningIdOfFact, typedFact } from "./learnings.js";

/** The claims memory already holds, to raise their evidence instead of adding a copy. */
export interface KnownClaims {
  /** The id of the learning a fact (with its type prefix) or a decision title restates. */
  find(text: string): string | undefined;
}

export const NO_CLAIMS: KnownClaims = { find: () => undefined };

/**
 * The learnings of `engrams` by what makes two claims one: the same normalized text (their
 * learning id), or, with a registry, the same entity-linked claim (mentions replaced by the
 * entities they name). Tentative facts are not claims. Engrams of `exceptVersion` are left
 * out: a slice compacted again after a crash must give the same engrams, not evidence of
 * itself.
 */
export function knownClaims(
  engrams: Iterable<Engram>,
  matcher: EntityMatcher | undefined,
  exceptVersion?: string,
): KnownClaims {
  const ids = new Set<string>();
  const byClaim = new Map<string, string>();
  const add = (text: string) => {
    const id = learningIdOfFact(text);
    ids.add(id);
    if (matcher) {
      const claim = matcher.claimKey(typedFact(text).text);
      if (claim.length > 0 && !byClaim.has(claim)) byClaim.set(claim, id);
    }
  };
  // Sorted, so that the id a claim key maps to does not depend on the engrams' order.
  const sorted = [...engrams]
    .filter((e) => e.version !== exceptVersion)
    .sort((a, b) => (a.engram_id < b.engram_id ? -1 : a.engram_id > b.engram_id ? 1 : 0));
  for (const engram of sorted) {
    const tentative = new Set(engram.tentative ?? []);
    for (const fact of engram.facts) if (!tentative.has(fact)) add(fact);
    for (const decision of engram.decisions) add(decision.title);
  }
  if (ids.size === 0) return NO_CLAIMS;
  return {
    find(text) {
      const id = learningIdOfFact(text);
      if (ids.has(id)) return id;
      return matcher ? byClaim.get(matcher.claimKey(typedFact(text).text)) : undefined;
    },
  };
}
