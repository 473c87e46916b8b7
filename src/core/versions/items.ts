import type { Sealed } from "../../schema/common.js";

/** What a session can write into its buffer. */
export const SESSION_ITEM_KINDS = [
  "episode",
  "fact",
  "lesson",
  "convention",
  "decision",
  "state",
  "core",
] as const;
export type SessionItemKind = (typeof SESSION_ITEM_KINDS)[number];

/** The kinds consolidated by `validate_and_merge`. */
export const KNOWLEDGE_KINDS = ["fact", "lesson", "convention", "decision"] as const;
export type KnowledgeKind = (typeof KNOWLEDGE_KINDS)[number];

/** How a knowledge record reads as a fact, as an engram states a fact of that kind. */
export function knowledgeFactText(kind: Exclude<KnowledgeKind, "decision">, text: string): string {
  return `${kind === "lesson" ? "Lesson: " : kind === "convention" ? "Convention: " : ""}${text}`;
}

export const EPISODE_OUTCOMES = ["success", "partial", "failure", "abandoned"] as const;
export type EpisodeOutcome = (typeof EPISODE_OUTCOMES)[number];

/**
 * A state or core key: it names the file `memory/state/<key>.json` or `memory/core/<key>.json`,
 * so it is kept to safe file-name characters.
 */
export const DOCUMENT_KEY_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** One line of a session buffer, as the worker wrote it (already redacted and sealed). */
export interface SessionItem {
  /** Position in the buffer, from 1. */
  seq: number;
  kind: SessionItemKind;
  written_at: string;
  text?: string;
  rationale?: string;
  /** Sensitive text, sealed at the worker: its clear text never reaches the buffer. */
  sealed?: Sealed[];
  privacy?: string;
  confidence?: number;
  outcome?: EpisodeOutcome;
  key?: string;
  value?: unknown;
  /** How many secrets were redacted from this item. */
  redactions: number;
}

/** The value an outcome stands for when surprise is measured (success 1, partial 0.5). */
export function outcomeValue(outcome: EpisodeOutcome): number {
  switch (outcome) {
    case "success":
      return 1;
    case "partial":
      return 0.5;
    default:
      return 0;
  }
}

/** |confidence - outcome value|, rounded to 6 places so it prints the same everywhere. */
export function surpriseOf(confidence: number, outcome: EpisodeOutcome): number {
  return Math.round(Math.abs(confidence - outcomeValue(outcome)) * 1e6) / 1e6;
}
