import type { Privacy } from "../../schema/common.js";
import type { Engram } from "../../schema/engram.js";
import type { EntityId, LinkedLearning } from "../graph/entities.js";
import type { LearningType } from "../graph/learnings.js";
import type { PlacedLearning } from "../graph/lifecycle.js";
import { strictestPrivacy } from "../ingest/normalize.js";
import { compareText, truncateChars } from "../model/text.js";
import type { SyncCandidate, SyncItem, SyncValue } from "./item.js";

/** A learning not yet confirmed, with where its review stands (seed.json's proposal states). */
export interface ProposedLearning {
  learning: LinkedLearning;
  status: "pending" | "accepted" | "rejected";
  /** When a reviewer decided (ISO-8601), null while pending. */
  decided_at: string | null;
  /** What proposed it: a pull request, a branch, a session. */
  extracted_from: string;
}

/** Which learnings are confirmed and which are still proposals. */
export interface LearningStates {
  confirmed: LinkedLearning[];
  proposals: ProposedLearning[];
  /** When each confirmed learning was confirmed (ISO-8601), by id; absent: when written. */
  confirmed_at?: Readonly<Record<string, string>>;
}

/**
 * The states when only memory on main is known (no learning states from git and GitHub, see
 * `placedStates`): every learning present is confirmed (it reached main through a merged
 * engram pull request) and proposals are what the caller passes.
 */
export function learningStates(
  onMain: readonly LinkedLearning[],
  proposed: readonly ProposedLearning[] = [],
): LearningStates {
  const confirmed = new Set(onMain.map((l) => l.id));
  return {
    confirmed: [...onMain],
    // A claim already on main is confirmed, whatever a pull request still says about it.
    proposals: proposed.filter((p) => !confirmed.has(p.learning.id)),
  };
}

/**
 * The states `worker learnings` decides (propose -> confirm -> persist through the engram pull
 * request) in the seed's terms: confirmed learnings are learning nodes with their
 * `confirmed_at`; proposed ones proposals `pending`; rejected ones proposals `rejected`,
 * decided when their pull request closed. A confirmed learning whose proposal node exists
 * (`proposed`: ids with a proposal node already) keeps it, `accepted` when confirmed.
 */
export function placedStates(
  placed: readonly PlacedLearning[],
  proposed: ReadonlySet<string> = new Set(),
): LearningStates {
  const confirmed: LinkedLearning[] = [];
  const proposals: ProposedLearning[] = [];
  const confirmedAt: Record<string, string> = {};
  for (const { learning, entry } of placed) {
    // A merged pull request's learning is found on main: the pull request proposed it.
    const extracted_from =
      entry.pr === null
        ? entry.where
        : `${entry.status === "confirmed" ? "pull request" : entry.where} #${entry.pr}`;
    if (entry.status === "confirmed") {
      confirmed.push(learning);
      if (entry.confirmed_at !== null) confirmedAt[learning.id] = entry.confirmed_at;
      if (proposed.has(learning.id)) {
        proposals.push({
          learning,
          status: "accepted",
          decided_at: entry.confirmed_at,
          extracted_from,
        });
      }
    } else {
      const rejected = entry.status === "rejected";
      proposals.push({
        learning,
        status: rejected ? "rejected" : "pending",
        decided_at: rejected ? entry.decided_at : null,
        extracted_from,
      });
    }
  }
  return { confirmed, proposals, confirmed_at: confirmedAt };
}

/** seed.json's learning types: pattern, insight, self_knowledge. */
export function seedType(type: LearningType): "pattern" | "insight" | "self_knowledge" {
  if (type === "pattern" || type === "self_knowledge") return type;
  return "insight";
}

export interface LearningItemOptions {
  /** Privacy of a learning whose engrams are not known (none found in `engrams`). */
  default_privacy: Privacy;
  default_confidence: number;
  project: string;
}

const TITLE_CHARS = 120;

/**
 * The strictest privacy of the learning's engrams and of what its knowledge record says, and
 * the engrams' mean confidence.
 */
function evidenceOf(
  learning: LinkedLearning,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
): { privacy: Privacy; confidence: number } {
  let privacy: Privacy | null = null;
  const confidences: number[] = [];
  for (const id of learning.engrams) {
    const engram = engrams.get(id);
    if (engram === undefined) continue;
    privacy = privacy === null ? engram.privacy : strictestPrivacy(privacy, engram.privacy);
    if (engram.signals.mean_confidence !== null) confidences.push(engram.signals.mean_confidence);
  }
  // No engram stated one: the learning's own (a session's record states its confidence).
  const confidence =
    confidences.length === 0
      ? (learning.confidence ?? options.default_confidence)
      : Math.round((confidences.reduce((a, b) => a + b, 0) / confidences.length) * 1000) / 1000;
  // A session's record speaks for itself, never for an engram stating the same claim.
  if (learning.privacy !== undefined) {
    privacy = privacy === null ? learning.privacy : strictestPrivacy(privacy, learning.privacy);
  }
  return { privacy: privacy ?? options.default_privacy, confidence };
}

const ofKind = (entities: readonly EntityId[], kind: string) =>
  entities.filter((e) => e.startsWith(`${kind}:`)).sort(compareText);

function contentOf(learning: LinkedLearning): string {
  return learning.rationale ? `${learning.text}\n\nWhy: ${learning.rationale}` : learning.text;
}

/** An item of the learning graph: the fields both node kinds carry, and the kind's own. */
function graphItem(
  type: "learning" | "proposal",
  learning: LinkedLearning,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
  own: Record<string, SyncValue>,
): SyncItem {
  const { privacy, confidence } = evidenceOf(learning, engrams, options);
  return {
    type,
    local_id: learning.id,
    title: truncateChars(learning.text, TITLE_CHARS),
    privacy,
    occurred_at: learning.written_at,
    fields: {
      type: seedType(learning.type),
      confidence,
      ...own,
      project: options.project,
      local_id: learning.id,
      privacy,
    },
    content: contentOf(learning),
  };
}

/**
 * Where a learning is read from, its tier and evidence, in the same words for an engram's and
 * for a session's knowledge record (whose "engram" is its knowledge file, long-term memory).
 */
function sourceOf(learning: LinkedLearning): string {
  const from = learning.engrams[0] ?? "?";
  const tier = `${learning.scope}, ${learning.evidence}`;
  return from.startsWith("memory/")
    ? `knowledge ${from} (${tier} statement(s))`
    : `engram ${from} (${tier} engram(s))`;
}

function learningItem(
  learning: LinkedLearning,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
  confirmedAt: string,
): SyncItem {
  return graphItem("learning", learning, engrams, options, {
    kind: learning.type,
    source: sourceOf(learning),
    confirmed_at: confirmedAt,
    related_people: ofKind(learning.entities, "person"),
    related_projects: ofKind(learning.entities, "project"),
    evidence_count: learning.evidence,
  });
}

function proposalItem(
  proposal: ProposedLearning,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
): SyncItem {
  return graphItem("proposal", proposal.learning, engrams, options, {
    status: proposal.status,
    extracted_from: proposal.extracted_from,
    decided_at: proposal.decided_at,
  });
}

/**
 * The learning graph's sync candidates: confirmed learnings as learning nodes (sent at once),
 * proposals as proposal nodes with their status (sent with the next batch). Pure: the same
 * states and engrams give the same candidates, in the same order.
 */
export function learningCandidates(
  states: LearningStates,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
): SyncCandidate[] {
  const out: SyncCandidate[] = [
    ...states.confirmed.map((l) => ({
      item: learningItem(l, engrams, options, states.confirmed_at?.[l.id] ?? l.written_at),
      verdict: { sync: true, priority: 1 as const, reasons: ["confirmed learning"] },
    })),
    ...states.proposals.map((p) => ({
      item: proposalItem(p, engrams, options),
      verdict: { sync: true, priority: 2 as const, reasons: [`proposal ${p.status}`] },
    })),
  ];
  return out.sort((a, b) =>
    compareText(`${a.item.type}:${a.item.local_id}`, `${b.item.type}:${b.item.local_id}`),
  );
}
