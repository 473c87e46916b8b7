import type { Outcome } from "../../schema/envelope.js";

/** The four kinds of item an external store receives. */
export const SYNC_TYPES = ["episode", "insight", "pattern", "evolution"] as const;
/** What memory's own collections hold (one Notion database each). */
export type MemorySyncType = (typeof SYNC_TYPES)[number];
/** Nodes of a learning graph (Tana): a learning of memory, and a proposal under review. */
export const LEARNING_SYNC_TYPES = ["learning", "proposal"] as const;
export type SyncType = MemorySyncType | (typeof LEARNING_SYNC_TYPES)[number];

/** 1: sent as soon as the target is healthy; 2: sent with the next batch. */
export type SyncPriority = 1 | 2;

/** Why an item is (or is not) sent: the policy's verdict, kept in the queue for the log. */
export interface SyncVerdict {
  sync: boolean;
  priority: SyncPriority | null;
  reasons: string[];
}

/** The thresholds of `[sync]` the policy reads; defaults are the seed's. */
export interface SyncThresholds {
  episode_min_confidence: number;
  episode_min_surprise: number;
  insight_validated_min_confidence: number;
  insight_validated_min_evidence: number;
  insight_pending_min_confidence: number;
  insight_pending_min_evidence: number;
  pattern_frequent_min_occurrences: number;
  pattern_established_min_occurrences: number;
  pattern_established_min_confidence: number;
}

export const DEFAULT_THRESHOLDS: SyncThresholds = {
  episode_min_confidence: 0.7,
  episode_min_surprise: 0.3,
  insight_validated_min_confidence: 0.6,
  insight_validated_min_evidence: 3,
  insight_pending_min_confidence: 0.8,
  insight_pending_min_evidence: 2,
  pattern_frequent_min_occurrences: 10,
  pattern_established_min_occurrences: 5,
  pattern_established_min_confidence: 0.6,
};

/** The seed's outcome values: success 1.0, partial 0.5, failure and abandoned 0.0. */
export const OUTCOME_VALUES: Readonly<Record<Outcome, number>> = {
  success: 1,
  partial: 0.5,
  failure: 0,
  abandoned: 0,
};

/**
 * |confidence - outcome value|, rounded to 9 decimals so that binary floating point does not
 * decide a threshold (0.8 - 0.5 is 0.30000000000000004 in IEEE 754).
 */
export function surpriseScore(confidence: number, outcome: Outcome): number {
  return Math.round(Math.abs(confidence - OUTCOME_VALUES[outcome]) * 1e9) / 1e9;
}

const SKIP: SyncVerdict = { sync: false, priority: null, reasons: [] };

/**
 * Episodes. High confidence = confidence >= 0.7 with a success or failure; high surprise =
 * surprise >= 0.3. Both: priority 1; either: priority 2; neither: skipped. These rules are
 * normative; the seed's own worked examples (0.9/success and 0.3/failure "skip") contradict
 * them and are not followed. An explicit request syncs whatever the rules say.
 */
export function episodeVerdict(
  episode: { confidence: number; outcome: Outcome },
  t: SyncThresholds = DEFAULT_THRESHOLDS,
  requested = false,
): SyncVerdict {
  const surprise = surpriseScore(episode.confidence, episode.outcome);
  const confident =
    episode.confidence >= t.episode_min_confidence &&
    (episode.outcome === "success" || episode.outcome === "failure");
  const surprising = surprise >= t.episode_min_surprise;
  const reasons = [
    ...(confident ? ["high confidence"] : []),
    ...(surprising ? ["high surprise"] : []),
  ];
  if (confident && surprising) return { sync: true, priority: 1, reasons };
  if (confident || surprising) return { sync: true, priority: 2, reasons };
  return requested ? { sync: true, priority: 1, reasons: ["requested"] } : SKIP;
}

export type InsightStatus = "validated" | "pending";

/** Insights: validated with confidence >= 0.6 and evidence >= 3 (1); pending >= 0.8 and >= 2 (2). */
export function insightVerdict(
  insight: { confidence: number; evidence_count: number; status: InsightStatus },
  t: SyncThresholds = DEFAULT_THRESHOLDS,
  requested = false,
): SyncVerdict {
  if (
    insight.status === "validated" &&
    insight.confidence >= t.insight_validated_min_confidence &&
    insight.evidence_count >= t.insight_validated_min_evidence
  ) {
    return { sync: true, priority: 1, reasons: ["validated"] };
  }
  if (
    insight.status === "pending" &&
    insight.confidence >= t.insight_pending_min_confidence &&
    insight.evidence_count >= t.insight_pending_min_evidence
  ) {
    return { sync: true, priority: 2, reasons: ["high confidence pending"] };
  }
  return requested ? { sync: true, priority: 1, reasons: ["requested"] } : SKIP;
}

/** Patterns: occurrences >= 10 (1), or >= 5 with confidence >= 0.6 (2). */
export function patternVerdict(
  pattern: { occurrences: number; confidence: number },
  t: SyncThresholds = DEFAULT_THRESHOLDS,
  requested = false,
): SyncVerdict {
  if (pattern.occurrences >= t.pattern_frequent_min_occurrences) {
    return { sync: true, priority: 1, reasons: ["high frequency"] };
  }
  if (
    pattern.occurrences >= t.pattern_established_min_occurrences &&
    pattern.confidence >= t.pattern_established_min_confidence
  ) {
    return { sync: true, priority: 2, reasons: ["established"] };
  }
  return requested ? { sync: true, priority: 1, reasons: ["requested"] } : SKIP;
}

/** Evolution: every memory version, always (created, figures changed, superseded). */
export function evolutionVerdict(): SyncVerdict {
  return { sync: true, priority: 1, reasons: ["memory version"] };
}
