/**
 * Every engram within `engram_max_bytes`, whatever made it. An engram over the budget is split
 * into parts that each fit: its decisions, facts, evidence, episodes, sealed notes, telemetry
 * and, when they crowd the rest out, its links, spread over the parts in that order, so
 * nothing is dropped for size. Only an item larger than a whole engram is shortened, and a
 * sealed note no engram can hold (ciphertext cannot be cut) is left out, both counted in
 * `signals.truncated`. The cycle passes every engram it writes through `fitEngrams`, so no way
 * of making one (a slice, compactions for room joined, a history import, promotion) can write
 * a file `director verify` refuses.
 */
import type { Link, Sealed } from "../../schema/common.js";
import type { Decision, Engram, EngramBody, Episode } from "../../schema/engram.js";
import { learningIdOfFact } from "../graph/learnings.js";
import { saidOf, saidStated } from "../graph/said-by.js";
import { engramFileSize, sealEngram } from "../model/engram.js";
import { cutText } from "../model/text.js";
import type { Telemetry } from "./telemetry.js";

type Piece =
  | { kind: "decision"; value: Decision }
  | { kind: "fact"; value: string; tentative: boolean }
  | { kind: "evidence"; value: [string, number] }
  | { kind: "episode"; value: Episode }
  | { kind: "sealed"; value: Sealed }
  | { kind: "worker"; value: Telemetry["workers"][number] }
  | { kind: "error"; value: Telemetry["errors"][number] }
  | { kind: "link"; value: Link }
  | { kind: "entity"; value: string };

/** How an engram body finds its entities; absent: the entities are spread like any item. */
export type BodyEntities = ((body: EngramBody) => string[]) | undefined;

/**
 * The engrams, each within `maxBytes`: one that fits is kept as it is (same bytes, same id);
 * one that does not is replaced by its parts, in place.
 */
export function fitEngrams(
  engrams: readonly Engram[],
  maxBytes: number,
  entities?: BodyEntities,
): Engram[] {
  return engrams.flatMap((engram) => {
    if (engramFileSize(engram) <= maxBytes) return [engram];
    const { engram_id: _id, hash: _hash, ...body } = engram;
    return fitBody(body, maxBytes, entities).map(sealEngram);
  });
}

/**
 * A body as parts that each fit `maxBytes` (the body itself when it fits). The first part keeps
 * the event count; later ones count 0 events and carry `provenance.part`, numbered on from the
 * body's own part, as `packEngrams` numbers them.
 */
export function fitBody(body: EngramBody, maxBytes: number, entities?: BodyEntities): EngramBody[] {
  if (engramFileSize(body) <= maxBytes) return [body];
  const {
    telemetry,
    sealed,
    episodes,
    tentative,
    evidence,
    origins,
    said_by: _said,
    entities: bodyEntities,
    ...rest
  } = body;
  // Each item's own provenance, restated per part against the part's senders and links.
  const said = body.said_by === undefined ? undefined : saidOf([body]);
  const firstPart = typeof body.provenance.part === "number" ? body.provenance.part : 1;
  let skeleton: EngramBody = { ...rest, facts: [], decisions: [] };
  let trimmed = 0;
  // Links go on every part while they leave room for the items; otherwise they are items too.
  const linksShared = engramFileSize(skeleton) <= maxBytes / 2;
  if (!linksShared) skeleton = { ...skeleton, links: [] };
  if (engramFileSize(skeleton) > maxBytes) {
    const senders = fitSenders(skeleton, maxBytes);
    trimmed = skeleton.provenance.senders.length - senders.length;
    skeleton = { ...skeleton, provenance: { ...skeleton.provenance, senders } };
  }

  const tentativeSet = new Set(tentative ?? []);
  const pieces: Piece[] = [
    ...body.decisions.map((value) => ({ kind: "decision" as const, value: { ...value } })),
    ...body.facts.map((value) => ({
      kind: "fact" as const,
      value,
      tentative: tentativeSet.has(value),
    })),
    ...Object.entries(evidence ?? {}).map((value) => ({ kind: "evidence" as const, value })),
    ...(episodes ?? []).map((value) => ({ kind: "episode" as const, value: { ...value } })),
    ...(sealed ?? []).map((value) => ({ kind: "sealed" as const, value })),
    ...(telemetry?.workers ?? []).map((value) => ({ kind: "worker" as const, value })),
    ...(telemetry?.errors ?? []).map((value) => ({ kind: "error" as const, value })),
    ...(linksShared ? [] : body.links.map((value) => ({ kind: "link" as const, value }))),
    ...(entities ? [] : (bodyEntities ?? []).map((value) => ({ kind: "entity" as const, value }))),
  ];

  const assemble = (index: number, chunk: readonly Piece[]): EngramBody => {
    const part: EngramBody = {
      ...skeleton,
      facts: [],
      decisions: [],
      provenance:
        index === 0
          ? skeleton.provenance
          : { ...skeleton.provenance, event_count: 0, part: firstPart + index },
      signals: { ...skeleton.signals, truncated: skeleton.signals.truncated + trimmed },
    };
    const lists = collect(chunk);
    part.facts = lists.facts;
    part.decisions = lists.decisions;
    if (!linksShared) part.links = lists.links;
    if (lists.tentative.length > 0) part.tentative = lists.tentative;
    if (lists.evidence.length > 0) part.evidence = Object.fromEntries(lists.evidence);
    if (lists.episodes.length > 0) part.episodes = lists.episodes;
    if (lists.sealed.length > 0) part.sealed = lists.sealed;
    if (lists.workers.length > 0 || lists.errors.length > 0) {
      part.telemetry = { workers: lists.workers, errors: lists.errors };
    }
    const stated = statedOrigins(part, origins);
    if (stated) part.origins = stated;
    const saidHere = saidStated(part, said);
    if (saidHere) part.said_by = saidHere;
    const found = entities ? entities(part) : lists.entities;
    if (found.length > 0) part.entities = found;
    return part;
  };

  // A piece that no part could hold is shortened (or, if it cannot be, left out) first, so
  // that packing below only ever has to move pieces to the next part.
  const fitting: Piece[] = [];
  const holds = (piece: Piece) => engramFileSize(assemble(1, [piece])) <= maxBytes - 16;
  for (const piece of pieces) {
    while (!holds(piece) && shorten(piece)) trimmed++;
    if (holds(piece)) fitting.push(piece);
    else trimmed++;
  }

  const parts: EngramBody[] = [];
  let next = 0;
  while (next < fitting.length) {
    const index = parts.length;
    const chunk: Piece[] = [];
    let estimate = engramFileSize(assemble(index, [])) + 16;
    while (next < fitting.length) {
      const piece = fitting[next] as Piece;
      if (chunk.length > 0 && estimate + cost(piece) > maxBytes) break;
      chunk.push(piece);
      estimate += cost(piece);
      next++;
    }
    let part = assemble(index, chunk);
    // The estimate can be off: give pieces back until the part fits.
    while (engramFileSize(part) > maxBytes && chunk.length > 1) {
      chunk.pop();
      next--;
      part = assemble(index, chunk);
    }
    parts.push(part);
  }
  return parts.length > 0 ? parts : [assemble(0, [])];
}

interface Lists {
  facts: string[];
  tentative: string[];
  decisions: Decision[];
  evidence: [string, number][];
  episodes: Episode[];
  sealed: Sealed[];
  workers: Telemetry["workers"];
  errors: Telemetry["errors"];
  links: Link[];
  entities: string[];
}

function collect(chunk: readonly Piece[]): Lists {
  const out: Lists = {
    facts: [],
    tentative: [],
    decisions: [],
    evidence: [],
    episodes: [],
    sealed: [],
    workers: [],
    errors: [],
    links: [],
    entities: [],
  };
  for (const piece of chunk) {
    if (piece.kind === "fact") {
      out.facts.push(piece.value);
      if (piece.tentative) out.tentative.push(piece.value);
    } else if (piece.kind === "decision") out.decisions.push(piece.value);
    else if (piece.kind === "evidence") out.evidence.push(piece.value);
    else if (piece.kind === "episode") out.episodes.push(piece.value);
    else if (piece.kind === "sealed") out.sealed.push(piece.value);
    else if (piece.kind === "worker") out.workers.push(piece.value);
    else if (piece.kind === "error") out.errors.push(piece.value);
    else if (piece.kind === "link") out.links.push(piece.value);
    else out.entities.push(piece.value);
  }
  return out;
}

/** The origins of the learnings a part states (each part keeps those of its own items). */
function statedOrigins(
  part: EngramBody,
  origins: EngramBody["origins"],
): EngramBody["origins"] | undefined {
  if (origins === undefined) return undefined;
  const ids = new Set([...part.facts, ...part.decisions.map((d) => d.title)].map(learningIdOfFact));
  const kept = Object.entries(origins).filter(([id]) => ids.has(id));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** A generous size of one piece in the pretty-printed file, so estimates rarely need undoing. */
function cost(piece: Piece): number {
  const bytes = Buffer.byteLength(JSON.stringify(piece.value, null, 4), "utf8") + 16;
  return piece.kind === "fact" && piece.tentative ? 2 * bytes : bytes;
}

/** Halves the longest text of a piece that has one over 40 characters; false if none. */
function shorten(piece: Piece): boolean {
  const half = (text: string) => `${cutText(text, Math.floor(text.length / 2))}…`;
  if (piece.kind === "fact" && piece.value.length > 40) {
    piece.value = half(piece.value);
    return true;
  }
  if (piece.kind === "decision") {
    if (piece.value.rationale.length > 40) {
      piece.value.rationale = half(piece.value.rationale);
      return true;
    }
    if (piece.value.title.length > 40) {
      piece.value.title = half(piece.value.title);
      return true;
    }
  }
  if (piece.kind === "episode" && piece.value.text !== undefined && piece.value.text.length > 40) {
    piece.value.text = half(piece.value.text);
    return true;
  }
  return false;
}

/** The most senders (in order) with which the skeleton fits. */
function fitSenders(skeleton: EngramBody, maxBytes: number): string[] {
  const all = skeleton.provenance.senders;
  let kept = all.length;
  while (kept > 1) {
    const trial = {
      ...skeleton,
      provenance: { ...skeleton.provenance, senders: all.slice(0, kept) },
    };
    if (engramFileSize(trial) <= maxBytes) break;
    kept = Math.max(1, Math.floor(kept / 2));
  }
  return all.slice(0, kept);
}
