import type { Engram } from "../../schema/engram.js";
import type { Outcome } from "../../schema/envelope.js";
import {
  type EntityId,
  type EntityMatcher,
  type LinkedLearning,
  linkLearning,
} from "./entities.js";
import { type LearningType, learningsOf } from "./learnings.js";
import { withoutReplaced } from "./supersession.js";

/** propose -> confirm -> persist: where a learning stands. */
export type LearningStatus = "proposed" | "confirmed" | "rejected";
export const LEARNING_STATUSES: readonly LearningStatus[] = ["proposed", "confirmed", "rejected"];

/** Where one engram stands, as git (and GitHub, when configured) says. */
export interface EngramPlace {
  status: LearningStatus;
  /** Where it was found: on the base branch, in a pull request, on the engram branch, ... */
  where:
    | "main"
    | "merged pull request"
    | "open pull request"
    | "branch"
    | "work tree"
    | "closed pull request";
  /** Seconds since 1970 it reached the base branch (its merge, or the commit adding it). */
  confirmedAt?: number;
  /** Seconds since 1970 its pull request was closed unmerged (rejected only). */
  decidedAt?: number;
  pr?: number;
}

export interface LearningEntry {
  id: string;
  status: LearningStatus;
  type: LearningType;
  text: string;
  confidence: number | null;
  /** The outcome its note stated; absent when none was stated. */
  outcome?: Outcome;
  /** Where it came from: the memory it was imported from, else the senders that stated it. */
  source: string;
  entities: EntityId[];
  evidence: number;
  /** When it was confirmed (ISO-8601 UTC); null while proposed or rejected. */
  confirmed_at: string | null;
  /** When it was rejected (its pull request closed unmerged, ISO-8601 UTC); else null. */
  decided_at: string | null;
  where: EngramPlace["where"];
  pr: number | null;
  engrams: string[];
}

const RANK: Record<LearningStatus, number> = { confirmed: 0, proposed: 1, rejected: 2 };

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A learning with its links and where it stands: what the sync targets send. */
export interface PlacedLearning {
  learning: LinkedLearning;
  entry: LearningEntry;
}

/**
 * The learnings of every engram that git and GitHub know of, each with the best place of the
 * engrams stating it: confirmed (on the base branch, or merged) before proposed (on the
 * engram branch, in an open pull request, or only in the work tree) before rejected (in a
 * pull request closed unmerged). `confirmed_at` is when the memory it was imported from
 * confirmed it, else when its first engram reached the base branch.
 */
export function learningEntries(
  engrams: ReadonlyMap<string, Engram>,
  places: ReadonlyMap<string, EngramPlace>,
  matcher: EntityMatcher,
): LearningEntry[] {
  return placedLearnings(engrams, places, matcher).map((p) => p.entry);
}

/** `learningEntries` with each learning's links kept beside its entry, in the same order. */
export function placedLearnings(
  engrams: ReadonlyMap<string, Engram>,
  places: ReadonlyMap<string, EngramPlace>,
  matcher: EntityMatcher,
  /** Evidence sessions gave learnings (`memory/knowledge/evidence.json`), by learning id. */
  sessionEvidence: ReadonlyMap<string, number> = new Map(),
): PlacedLearning[] {
  const out: PlacedLearning[] = [];
  // What an engram on the base branch replaced is no learning any more; a proposal's or a
  // closed pull request's replacement is not yet, or never, what the team believes.
  const all = [...engrams.values()];
  const confirmed = all.filter((e) => places.get(e.engram_id)?.status === "confirmed");
  for (const stated of learningsOf(withoutReplaced(all, confirmed))) {
    const extra = sessionEvidence.get(stated.id) ?? 0;
    const learning = extra === 0 ? stated : { ...stated, evidence: stated.evidence + extra };
    let best: EngramPlace | undefined;
    let confirmedAt: number | undefined;
    for (const id of learning.engrams) {
      const place = places.get(id);
      if (!place) continue;
      if (!best || RANK[place.status] < RANK[best.status]) best = place;
      if (
        place.confirmedAt !== undefined &&
        (confirmedAt === undefined || place.confirmedAt < confirmedAt)
      )
        confirmedAt = place.confirmedAt;
    }
    if (!best) continue;
    const linked = linkLearning(learning, engrams, matcher);
    const origin = learning.origin ?? null;
    const confirmed =
      best.status !== "confirmed"
        ? null
        : (origin?.confirmed_at ?? (confirmedAt === undefined ? null : iso(confirmedAt)));
    out.push({
      learning: linked,
      entry: {
        id: learning.id,
        status: best.status,
        type: learning.type,
        text: learning.text,
        confidence: learning.confidence ?? null,
        ...(learning.outcome !== undefined ? { outcome: learning.outcome } : {}),
        source: origin?.source ?? (learning.senders.join(", ") || "engram"),
        entities: linked.entities,
        evidence: learning.evidence,
        confirmed_at: confirmed,
        decided_at:
          best.status === "rejected" && best.decidedAt !== undefined ? iso(best.decidedAt) : null,
        where: best.where,
        pr: best.pr ?? null,
        engrams: learning.engrams,
      },
    });
  }
  return out.sort(byPlace);
}

/**
 * Sessions' knowledge records (`knowledgeItems`) placed like the engrams' learnings, in the
 * order their sources were read, best first: the first place a claim is found is where it
 * stands, and a claim an engram already states is that engram's learning.
 */
export function placedKnowledge<K>(
  sources: readonly { items: readonly K[]; place: EngramPlace }[],
  known: ReadonlySet<string>,
  toLearning: (item: K) => LinkedLearning,
): PlacedLearning[] {
  const seen = new Set(known);
  const out: PlacedLearning[] = [];
  for (const { items, place } of sources) {
    for (const item of items) {
      const learning = toLearning(item);
      if (seen.has(learning.id)) continue;
      seen.add(learning.id);
      // Without a merge time, a confirmed record counts from its version's making.
      const confirmedAt =
        place.status !== "confirmed"
          ? null
          : place.confirmedAt !== undefined
            ? iso(place.confirmedAt)
            : learning.written_at.replace(/\.\d{3}Z$/, "Z");
      out.push({
        learning,
        entry: {
          id: learning.id,
          status: place.status,
          type: learning.type,
          text: learning.text,
          confidence: learning.confidence ?? null,
          source: "session",
          entities: learning.entities,
          evidence: learning.evidence,
          confirmed_at: confirmedAt,
          decided_at:
            place.status === "rejected" && place.decidedAt !== undefined
              ? iso(place.decidedAt)
              : null,
          where: place.where,
          pr: place.pr ?? null,
          engrams: learning.engrams,
        },
      });
    }
  }
  return out;
}

/** Confirmed before proposed before rejected, newest confirmation first, then by id. */
export function byPlace(a: PlacedLearning, b: PlacedLearning): number {
  const x = a.entry;
  const y = b.entry;
  return (
    RANK[x.status] - RANK[y.status] ||
    (y.confirmed_at ?? "").localeCompare(x.confirmed_at ?? "") ||
    (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
  );
}
