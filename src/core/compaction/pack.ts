import type { Sealed } from "../../schema/common.js";
import type {
  Decision,
  Engram,
  EngramBody,
  Episode,
  ItemProvenance,
  LearningOrigin,
} from "../../schema/engram.js";
import { capEntities, type EntityMatcher } from "../graph/entities.js";
import { learningIdOfFact } from "../graph/learnings.js";
import { saidStated } from "../graph/said-by.js";
import { engramFileSize, sealEngram } from "../model/engram.js";
import { cutText } from "../model/text.js";
import { MAX_EPISODES } from "./episodes.js";
import { fitBody } from "./fit.js";
import type { Telemetry } from "./telemetry.js";

/** What an engram says about learnings beyond its items, and how it finds its entities. */
export interface GroupLinks {
  /** Claims already in memory restated by the group: learning id to times (first part only). */
  evidence: Record<string, number>;
  /** Where imported learnings came from, by learning id: each part keeps those it states. */
  origins: ReadonlyMap<string, LearningOrigin>;
  /** Who said each item and what it linked, by learning id: each part keeps its own items'. */
  said?: ReadonlyMap<string, ItemProvenance>;
  entities?: ((body: EngramBody) => string[]) | undefined;
}

/**
 * The entity ids of engram bodies (their facts, decisions, links and senders), as
 * `capEntities` keeps them. Each item is linked once, however often packing rebuilds a
 * body around it, so linking stays linear in the text.
 */
export function bodyLinker(matcher: EntityMatcher): (body: EngramBody) => string[] {
  const items = new Map<string, readonly string[]>();
  const ofItem = (text: string): readonly string[] => {
    let found = items.get(text);
    if (found === undefined) {
      found = matcher.linkDocument({ texts: [text], links: [], senders: [] }).entities;
      items.set(text, found);
    }
    return found;
  };
  let sharedKey: string | undefined;
  let shared: readonly string[] = [];
  return (body) => {
    const key = JSON.stringify([body.links, body.provenance.senders]);
    if (key !== sharedKey) {
      sharedKey = key;
      shared = matcher.linkDocument({
        texts: [],
        links: body.links,
        senders: body.provenance.senders,
      }).entities;
    }
    const found = new Set(shared);
    for (const fact of body.facts) for (const id of ofItem(fact)) found.add(id);
    for (const d of body.decisions) {
      for (const id of ofItem(d.title)) found.add(id);
      if (d.rationale !== "") for (const id of ofItem(d.rationale)) found.add(id);
    }
    return capEntities(found);
  };
}

/** Origins of the learnings a body states, by id (undefined when none). */
export function originsStated(
  body: Pick<EngramBody, "facts" | "decisions">,
  origins: ReadonlyMap<string, LearningOrigin>,
): Record<string, LearningOrigin> | undefined {
  if (origins.size === 0) return undefined;
  const ids = [...body.facts, ...body.decisions.map((d) => d.title)].map(learningIdOfFact);
  const stated = [...new Set(ids)].filter((id) => origins.has(id)).sort();
  if (stated.length === 0) return undefined;
  return Object.fromEntries(stated.map((id) => [id, origins.get(id) as LearningOrigin]));
}

/** The items of one group: what an engram of it says. */
export interface GroupItems {
  facts: string[];
  decisions: Decision[];
  tentative: string[];
}

/**
 * Splits one group's items into as many engrams as `engram_max_bytes` requires, so nothing
 * is dropped for size; only a single item larger than the budget is shortened (counted in
 * `signals.truncated`). Sizes are estimated per item and checked exactly once per engram,
 * so packing stays linear in the number of items.
 */
export function packEngrams(
  base: Omit<EngramBody, "facts" | "decisions" | "signals"> & {
    signals: Omit<EngramBody["signals"], "truncated">;
  },
  extras: { telemetry?: Telemetry; episodes?: Episode[] },
  items: GroupItems,
  sealed: readonly Sealed[],
  maxBytes: number,
  links: GroupLinks = { evidence: {}, origins: new Map() },
): Engram[] {
  // An engram holds at most MAX_EPISODES episodes: the first part the first of them, and
  // each further run of them a part of its own, so none is left out of the sync queue.
  const [firstEpisodes = [], ...moreEpisodes] = chunks(extras.episodes ?? [], MAX_EPISODES);
  const extra = {
    ...(extras.telemetry ? { telemetry: extras.telemetry } : {}),
    ...(firstEpisodes.length > 0 ? { episodes: firstEpisodes } : {}),
  };
  type Item = { kind: "fact"; text: string } | { kind: "decision"; value: Decision };
  const queue: Item[] = [
    ...items.decisions.map((value) => ({ kind: "decision" as const, value: { ...value } })),
    ...items.facts.map((text) => ({ kind: "fact" as const, text })),
  ];
  const tentative = new Set(items.tentative);
  const build = (
    chunk: readonly Item[],
    part: number,
    withExtras: boolean,
    cut: number,
  ): EngramBody => {
    const facts = chunk.flatMap((i) => (i.kind === "fact" ? [i.text] : []));
    const body: EngramBody = {
      ...base,
      facts,
      decisions: chunk.flatMap((i) => (i.kind === "decision" ? [i.value] : [])),
      // The group's events are counted once, on its first part, so counts add up.
      provenance:
        part > 0 ? { ...base.provenance, event_count: 0, part: part + 1 } : base.provenance,
      signals: { ...base.signals, truncated: cut },
      ...(withExtras ? extra : {}),
      ...(withExtras && sealed.length > 0 ? { sealed: [...sealed] } : {}),
    };
    const tentativeHere = facts.filter((f) => tentative.has(f));
    if (tentativeHere.length > 0) body.tentative = tentativeHere;
    // Absent rather than empty, so engrams without them keep their earlier bytes and hashes.
    if (withExtras && Object.keys(links.evidence).length > 0) body.evidence = links.evidence;
    const origins = originsStated(body, links.origins);
    if (origins) body.origins = origins;
    const said = saidStated(body, links.said);
    if (said) body.said_by = said;
    if (links.entities) {
      const entities = links.entities(body);
      if (entities.length > 0) body.entities = entities;
    }
    return body;
  };
  // Sizes are measured on bodies (placeholder id and hash); only emitted engrams are hashed.
  const size = engramFileSize;
  const cost = (item: Item) =>
    item.kind === "fact"
      ? (Buffer.byteLength(JSON.stringify(item.text), "utf8") + 8) *
        (tentative.has(item.text) ? 2 : 1)
      : Buffer.byteLength(JSON.stringify(item.value), "utf8") + 40;

  // An empty part after the first differs from the next one only by its part number: it is
  // built and measured once, and the number's digits counted for each part.
  let emptyLaterPart: number | undefined;
  const emptySize = (part: number): number => {
    if (part === 0) return size(build([], 0, false, 0));
    emptyLaterPart ??= size(build([], 1, false, 0)) - String(2).length;
    return emptyLaterPart + String(part + 1).length;
  };
  const bodies: EngramBody[] = [];
  const measuredToFit = new WeakSet<EngramBody>();
  let index = 0;
  while (index < queue.length || bodies.length === 0) {
    const part = bodies.length;
    const withExtras = part === 0;
    const bare = emptySize(part) + 16;
    const full = withExtras ? size(build([], part, true, 0)) + 16 : bare;
    // Extras that crowd the items out (many long episodes, sealed notes) are not a reason to
    // cut an item: the items are packed as if they were not there, and `fitBody` moves the
    // extras on to parts of their own.
    const spill = withExtras && full > maxBytes / 2;
    const chunk: Item[] = [];
    let estimate = spill ? bare : full;
    while (index < queue.length) {
      const item = queue[index] as Item;
      const c = cost(item);
      if (chunk.length > 0 && estimate + c > maxBytes) break;
      chunk.push(item);
      estimate += c;
      index++;
    }
    let cut = 0;
    let engram = build(chunk, part, withExtras && !spill, cut);
    // Measured once per body built: a measure is a whole serialization.
    let engramSize = size(engram);
    // The estimate can be off by a little: give items back until the engram fits.
    while (engramSize > maxBytes && chunk.length > 1) {
      chunk.pop();
      index--;
      engram = build(chunk, part, withExtras && !spill, cut);
      engramSize = size(engram);
    }
    while (engramSize > maxBytes && chunk.length === 1 && shrink(chunk[0] as Item)) {
      cut = 1;
      engram = build(chunk, part, withExtras && !spill, cut);
      engramSize = size(engram);
    }
    if (!spill && engramSize <= maxBytes) measuredToFit.add(engram);
    bodies.push(spill ? build(chunk, part, true, cut) : engram);
    if (chunk.length === 0 && index >= queue.length) break;
  }
  for (const episodes of moreEpisodes)
    bodies.push({ ...build([], bodies.length, false, 0), episodes });
  // Whatever still does not fit (extras, links, senders) is spread over further parts; a
  // body measured above to fit is kept as it is (`fitBody` would measure it again to say so).
  const fitted = bodies.flatMap((body) =>
    measuredToFit.has(body) ? [body] : fitBody(body, maxBytes, links.entities),
  );
  return numberParts(fitted, base.provenance.event_count).map(sealEngram);
}

/**
 * Parts numbered in order: the group's events are counted once, on its first part (which
 * carries no number), so counts add up.
 */
function numberParts(bodies: readonly EngramBody[], eventCount: number): EngramBody[] {
  return bodies.map((body, i) => {
    const { part: _part, ...provenance } = body.provenance;
    return {
      ...body,
      provenance:
        i === 0
          ? { ...provenance, event_count: eventCount }
          : { ...provenance, event_count: 0, part: i + 1 },
    };
  });
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function shrink(
  item: { kind: "fact"; text: string } | { kind: "decision"; value: Decision },
): boolean {
  const half = (text: string) => `${cutText(text, Math.floor(text.length / 2))}…`;
  if (item.kind === "fact") {
    if (item.text.length <= 40) return false;
    item.text = half(item.text);
    return true;
  }
  if (item.value.rationale.length > 40) {
    item.value.rationale = half(item.value.rationale);
    return true;
  }
  if (item.value.title.length > 40) {
    item.value.title = half(item.value.title);
    return true;
  }
  return false;
}
