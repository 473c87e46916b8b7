import type { Episode } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { sha256Hex } from "../model/canonical.js";
import { clipItem, round3 } from "../model/text.js";
import { episodeVerdict, surpriseScore } from "../sync/policy.js";

/** At most this many episodes per engram: the rest still count in `signals.max_surprise`. */
const MAX_EPISODES = 32;

/**
 * The episodes an engram keeps when a group has more than it can hold: the ones the sync
 * policy (at its default thresholds) would send first, then the most surprising, so a cap
 * never drops a surprise in favour of a routine success. Kept in the order they happened.
 * What it keeps of a list is what it keeps of the lists it kept of each part.
 */
export function keptEpisodes(all: readonly Episode[]): Episode[] {
  if (all.length <= MAX_EPISODES) return [...all];
  const rank = (e: Episode) => episodeVerdict(e).priority ?? 3;
  const order = all.map((e, i) => ({ e, i }));
  order.sort((a, b) => rank(a.e) - rank(b.e) || b.e.surprise - a.e.surprise || a.i - b.i);
  return order
    .slice(0, MAX_EPISODES)
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
