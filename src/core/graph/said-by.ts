import type { Link } from "../../schema/common.js";
import type { Engram, EngramBody, ItemProvenance } from "../../schema/engram.js";
import type { Outcome } from "../../schema/envelope.js";
import { linkKey } from "../model/links.js";
import { type ItemStated, itemSaid, itemStated, learningIdOfFact } from "./learnings.js";

/**
 * Each item's own provenance (issue 36): notes compacted together keep who said each one and
 * what it linked, so a decision is not credited to every sender of its engram nor linked to
 * another note's file. An engram records an item's own only where it differs from the
 * engram's (the union); engrams of one sender without links keep their earlier bytes. An
 * item's stated confidence and outcome are its own too: the first its notes stated is kept.
 */

/** The most senders and links one item keeps: an item is one note, said by a few. */
const MAX_ITEM_SENDERS = 16;
const MAX_ITEM_LINKS = 16;

interface Credit {
  senders: Set<string>;
  links: Map<string, Link>;
  confidence?: number;
  outcome?: Outcome;
}

/** An item's provenance, being collected: senders and links in the order first seen. */
export class ItemCredit {
  private readonly byId = new Map<string, Credit>();

  /**
   * Credits the item `id` to `sender` (when it authored it) and to `links`; the first
   * confidence and outcome stated for it are its own.
   */
  add(id: string, sender: string | undefined, links: readonly Link[], stated?: ItemStated): void {
    let entry = this.byId.get(id);
    if (entry === undefined) {
      entry = { senders: new Set(), links: new Map() };
      this.byId.set(id, entry);
    }
    if (entry.confidence === undefined && stated?.confidence !== undefined)
      entry.confidence = stated.confidence;
    if (entry.outcome === undefined && stated?.outcome !== undefined)
      entry.outcome = stated.outcome;
    if (sender !== undefined && entry.senders.size < MAX_ITEM_SENDERS) entry.senders.add(sender);
    for (const link of links) {
      if (entry.links.size >= MAX_ITEM_LINKS) break;
      const key = linkKey(link);
      if (!entry.links.has(key)) entry.links.set(key, link);
    }
  }

  /** Adds what another collection credited (a later record of the same group). */
  join(pairs: readonly (readonly [string, ItemProvenance])[] | undefined): void {
    for (const [id, said] of pairs ?? []) {
      const senders = said.senders ?? [];
      if (senders.length === 0) this.add(id, undefined, said.links ?? [], said);
      for (const sender of senders) this.add(id, sender, said.links ?? [], said);
    }
  }

  /** The items' whole provenance, by learning id, senders sorted, links in order. */
  pairs(): [string, ItemProvenance][] {
    return [...this.byId.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([id, e]) => [
        id,
        {
          senders: [...e.senders].sort(),
          links: [...e.links.values()],
          ...(e.confidence !== undefined ? { confidence: e.confidence } : {}),
          ...(e.outcome !== undefined ? { outcome: e.outcome } : {}),
        },
      ]);
  }
}

/**
 * The `said_by` of a body: of each item it states, the senders and links that differ from the
 * body's own (a field that does not differ is left out), its stated outcome, and its stated
 * confidence unless its decision holds the same; undefined when no item has an entry.
 */
export function saidStated(
  body: Pick<EngramBody, "facts" | "decisions" | "provenance" | "links">,
  said: ReadonlyMap<string, ItemProvenance> | undefined,
): Record<string, ItemProvenance> | undefined {
  if (said === undefined || said.size === 0) return undefined;
  const senders = body.provenance.senders.join("\n");
  const links = body.links.map(linkKey).join("\n");
  const out: [string, ItemProvenance][] = [];
  const decided = new Map(body.decisions.map((d) => [learningIdOfFact(d.title), d.confidence]));
  const ids = [...body.facts.map(learningIdOfFact), ...decided.keys()];
  for (const id of [...new Set(ids)].sort()) {
    const own = said.get(id);
    if (own === undefined) continue;
    const entry: ItemProvenance = {};
    if (own.senders !== undefined && own.senders.join("\n") !== senders)
      entry.senders = own.senders;
    if (own.links !== undefined && own.links.map(linkKey).join("\n") !== links)
      entry.links = own.links;
    if (own.confidence !== undefined && own.confidence !== decided.get(id))
      entry.confidence = own.confidence;
    if (own.outcome !== undefined) entry.outcome = own.outcome;
    if (Object.keys(entry).length > 0) out.push([id, entry]);
  }
  return out.length > 0 ? Object.fromEntries(out) : undefined;
}

/**
 * Every item's provenance in `engrams`, as each states it: senders and links of all, the
 * confidence and outcome of the earliest that states one (by source window, then order).
 */
export function saidOf(
  engrams: readonly Pick<
    Engram,
    "facts" | "decisions" | "said_by" | "provenance" | "links" | "source_window"
  >[],
): Map<string, ItemProvenance> {
  const credit = new ItemCredit();
  const idsOf = (engram: Pick<Engram, "facts" | "decisions">) =>
    [...engram.facts, ...engram.decisions.map((d) => d.title)].map(learningIdOfFact);
  for (const engram of engrams) {
    for (const id of idsOf(engram)) {
      const { senders, links } = itemSaid(engram, id);
      credit.join([[id, { senders: [...senders], links: [...links] }]]);
    }
  }
  const earliestFirst = engrams
    .map((engram, i) => ({ engram, i }))
    .sort(
      (a, b) =>
        Date.parse(a.engram.source_window.start_ts) - Date.parse(b.engram.source_window.start_ts) ||
        a.i - b.i,
    );
  for (const { engram } of earliestFirst) {
    for (const id of idsOf(engram)) credit.add(id, undefined, [], itemStated(engram, id));
  }
  return new Map(credit.pairs());
}
