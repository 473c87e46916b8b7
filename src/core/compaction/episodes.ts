import type { Episode } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { sha256Hex } from "../model/canonical.js";
import { clipItem, round3 } from "../model/text.js";
import { episodeVerdict, surpriseScore } from "../sync/policy.js";

/** At most this many episodes per engram: a group with more spreads them over parts. */
export const MAX_EPISODES = 32;
/**
 * At most this many episodes per group record (a bound on memory across joined compactions):
 * beyond it the ones the sync policy sends last are left out, still counted in
 * `signals.max_surprise`.
 */
export const MAX_GROUP_EPISODES = 1024;

/**
 * The episodes a group keeps when it has more than `MAX_GROUP_EPISODES`: the ones the sync
 * policy (at its default thresholds) would send first, then the most surprising, so a cap
 * never drops a surprise in favour of a routine success. Kept in the order they happened.
 * What it keeps of a list is what it keeps of the lists it kept of each part.
 */
export function keptEpisodes(all: readonly Episode[]): Episode[] {
  if (all.length <= MAX_GROUP_EPISODES) return [...all];
  const rank = (e: Episode) => episodeVerdict(e).priority ?? 3;
  const order = all.map((e, i) => ({ e, i }));
  order.sort((a, b) => rank(a.e) - rank(b.e) || b.e.surprise - a.e.surprise || a.i - b.i);
  return order
    .slice(0, MAX_GROUP_EPISODES)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.e);
}

/** A note with an outcome and a confidence, as the engram keeps it for the sync policy. */
export function episodeOf(
  event: MemoryEvent,
  confidence: number,
  outcome: Episode["outcome"],
): Episode {
  return {
    id: `ep_${sha256Hex(event.key).slice(0, 24)}`,
    at: event.received_at,
    kind: event.kind,
    sender: event.sender.id,
    outcome,
    confidence,
    surprise: round3(surpriseScore(confidence, outcome)),
    privacy: event.privacy,
    ...(event.text !== undefined ? { text: clipItem(event.text) } : {}),
    ...(event.sealed !== undefined ? { sealed: event.sealed } : {}),
  };
}
