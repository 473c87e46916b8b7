import type { Privacy, Sealed } from "../../schema/common.js";
import type { LearningClaim } from "../graph/claims-cache.js";
import type { LearningType } from "../graph/learnings.js";
import type { EpisodeOutcome, KnowledgeKind } from "./items.js";

/** An episode kept by `append_all`: never modified once it has its permanent id. */
export interface EpisodeRecord {
  id: string;
  session_id: string;
  seq: number;
  outcome: EpisodeOutcome;
  confidence: number;
  surprise: number;
  text?: string;
  sealed?: Sealed[];
  /** The version that added it. */
  version: number;
}

/** A fact, lesson, convention or decision of memory (from engrams or earlier sessions). */
export interface KnowledgeRecord {
  id: string;
  kind: KnowledgeKind;
  text?: string;
  rationale?: string;
  sealed?: Sealed[];
  /**
   * Where it may go beyond the repository, as the session's item said (`worker session write
   * --privacy`); absent: private, the notes' default. It speaks for this record only.
   */
  privacy?: Privacy;
  confidence: number;
  /** How many sources stated it: a duplicate raises this instead of adding a copy. */
  evidence: number;
  version: number;
}

export interface StateHistoryEntry {
  value: unknown;
  version: number;
  session_id: string | null;
}

/** `memory/state/<key>.json`: the latest value, when it changed, and a bounded history. */
export interface StateDocument {
  key: string;
  value: unknown;
  /** The version that last changed it. */
  version: number;
  session_id: string | null;
  history: StateHistoryEntry[];
}

/** `memory/core/<key>.json`: identity, values, conventions, team profile. */
export interface CoreDocument {
  key: string;
  value: unknown;
  version: number;
  session_id: string | null;
}

/** One applied change of a core document: careful_merge logs every one. */
export interface CoreChange {
  key: string;
  session_id: string;
  version: number;
  old: unknown;
  new: unknown;
}

/**
 * Evidence sessions gave a learning engrams already hold (`l_` id): the claim is not copied
 * into the knowledge documents, the times sessions restated it are counted here. Engrams are
 * content-addressed, so their own `evidence` cannot change after they are written.
 */
export interface EvidenceRecord {
  id: string;
  /** How many sessions restated it (the engrams' own evidence is not included). */
  evidence: number;
  /** The version that last raised it. */
  version: number;
}

/** The master state at one version: what consolidation reads and returns. */
export interface MasterState {
  version: number;
  episodes: EpisodeRecord[];
  knowledge: KnowledgeRecord[];
  /** Sessions' evidence for learnings engrams hold, sorted by id. */
  evidence: EvidenceRecord[];
  state: Record<string, StateDocument>;
  core: Record<string, CoreDocument>;
  core_log: CoreChange[];
}

export function emptyMaster(version = 0): MasterState {
  return {
    version,
    episodes: [],
    knowledge: [],
    evidence: [],
    state: {},
    core: {},
    core_log: [],
  };
}

const KIND_OF: Record<LearningType, KnowledgeKind> = {
  decision: "decision",
  convention: "convention",
  pattern: "lesson",
  insight: "fact",
  self_knowledge: "fact",
};

/**
 * The knowledge engrams already hold (their learnings: decisions and firm facts), as records
 * a session's duplicate merges into: its evidence is raised (an `EvidenceRecord`) instead of
 * a copy being added. `evidence` is the engrams' own count. Engrams state no confidence: what
 * they hold is taken as established (1).
 */
export function knowledgeFromLearnings(
  learnings: readonly LearningClaim[],
  version: number,
): KnowledgeRecord[] {
  // Two literals, not a spread: some 40,000 learnings at 10,000 engrams, a spread each is slow.
  return learnings.map((l) => {
    const kind = KIND_OF[l.type];
    return l.rationale !== null
      ? {
          id: l.id,
          kind,
          text: l.text,
          rationale: l.rationale,
          confidence: 1,
          evidence: l.evidence,
          version,
        }
      : { id: l.id, kind, text: l.text, confidence: 1, evidence: l.evidence, version };
  });
}
