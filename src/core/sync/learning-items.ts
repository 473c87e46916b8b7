import type { Privacy } from "../../schema/common.js";
import type { Engram } from "../../schema/engram.js";
import type { EntityId, LinkedLearning } from "../graph/entities.js";
import type { LearningType } from "../graph/learnings.js";
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
}

/**
 * The one place that decides what "confirmed" means for the learning graph. Today every
 * learning present in memory on main is confirmed (it reached main through a merged engram
 * pull request) and proposals are what the caller passes (none yet): when learning states
 * (proposed / confirmed / rejected from engram pull requests) exist, they are read here.
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

/** The learnings' engrams' strictest privacy and mean confidence. */
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
  const confidence =
    confidences.length === 0
      ? options.default_confidence
      : Math.round((confidences.reduce((a, b) => a + b, 0) / confidences.length) * 1000) / 1000;
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

function learningItem(
  learning: LinkedLearning,
  engrams: ReadonlyMap<string, Engram>,
  options: LearningItemOptions,
): SyncItem {
  return graphItem("learning", learning, engrams, options, {
    kind: learning.type,
    source: `engram ${learning.engrams[0] ?? "?"} (${learning.scope}, ${learning.evidence} engram(s))`,
    confirmed_at: learning.written_at,
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
      item: learningItem(l, engrams, options),
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
