import type { Sealed } from "../../schema/common.js";
import type { Decision, Engram, EngramBody, Episode, LearningOrigin } from "../../schema/engram.js";
import { capEntities, type EntityMatcher } from "../graph/entities.js";
import { learningIdOfFact } from "../graph/learnings.js";
import { engramFileSize, sealEngram } from "../model/engram.js";
import { cutText } from "../model/text.js";
import type { Telemetry } from "./telemetry.js";

/** What an engram says about learnings beyond its items, and how it finds its entities. */
export interface GroupLinks {
  /** Claims already in memory restated by the group: learning id to times (first part only). */
  evidence: Record<string, number>;
  /** Where imported learnings came from, by learning id: each part keeps those it states. */
  origins: ReadonlyMap<string, LearningOrigin>;
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
  extra: { telemetry?: Telemetry; episodes?: Episode[] },
  items: GroupItems,
  sealed: readonly Sealed[],
  maxBytes: number,
  links: GroupLinks = { evidence: {}, origins: new Map() },
): Engram[] {
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

  const out: Engram[] = [];
  let index = 0;
  while (index < queue.length || out.length === 0) {
    const part = out.length;
    const withExtras = part === 0;
    const overhead = size(build([], part, withExtras, 0)) + 16;
    const chunk: Item[] = [];
    let estimate = overhead;
    while (index < queue.length) {
      const item = queue[index] as Item;
      const c = cost(item);
      if (chunk.length > 0 && estimate + c > maxBytes) break;
      chunk.push(item);
      estimate += c;
      index++;
    }
    let cut = 0;
    let engram = build(chunk, part, withExtras, cut);
    // The estimate can be off by a little: give items back until the engram fits.
    while (size(engram) > maxBytes && chunk.length > 1) {
      chunk.pop();
      index--;
      engram = build(chunk, part, withExtras, cut);
    }
    while (size(engram) > maxBytes && chunk.length === 1 && shrink(chunk[0] as Item)) {
      cut = 1;
      engram = build(chunk, part, withExtras, cut);
    }
    out.push(size(engram) <= maxBytes ? sealEngram(engram) : trimExtras(engram, maxBytes));
    if (chunk.length === 0 && index >= queue.length) break;
  }
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

function trimExtras(body: EngramBody, maxBytes: number): Engram {
  const next: EngramBody = {
    ...body,
    signals: { ...body.signals, truncated: body.signals.truncated + 1 },
  };
  const fits = () => engramFileSize(next) <= maxBytes;
  if (next.telemetry) {
    const { workers, errors } = next.telemetry;
    const telemetry = { workers, errors };
    next.telemetry = telemetry;
    telemetry.workers = longestFitting(workers, (kept) => {
      telemetry.workers = kept;
      return fits();
    });
    telemetry.errors = longestFitting(errors, (kept) => {
      telemetry.errors = kept;
      return fits();
    });
    if (telemetry.workers.length === 0 && telemetry.errors.length === 0) delete next.telemetry;
  }
  // Derived entity ids go first: the links they come from are the record.
  if (next.entities) {
    next.entities = longestFitting(next.entities, (kept) => {
      next.entities = kept;
      return fits();
    });
    if (next.entities.length === 0) delete next.entities;
  }
  next.links = longestFitting(next.links, (kept) => {
    next.links = kept;
    return fits();
  });
  if (next.sealed) {
    next.sealed = longestFitting(next.sealed, (kept) => {
      next.sealed = kept;
      return fits();
    });
  }
  const provenance = { ...next.provenance };
  next.provenance = provenance;
  provenance.senders = longestFitting(provenance.senders, (kept) => {
    provenance.senders = kept;
    return fits();
  });
  return sealEngram(next);
}

/**
 * The longest start of `list` with which the engram fits (none if even the empty one does
 * not): what dropping the last item until it fits would keep, found by halving, since an
 * engram only shrinks as items go.
 */
function longestFitting<T>(list: readonly T[], fitsWith: (kept: T[]) => boolean): T[] {
  if (fitsWith([...list])) return [...list];
  let lo = 0;
  let hi = list.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fitsWith(list.slice(0, mid))) lo = mid;
    else hi = mid - 1;
  }
  return list.slice(0, lo);
}
