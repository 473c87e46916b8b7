import type { Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import type { NoiseKind } from "./classify.js";

/** The sender of every envelope built from history: the marker of history-derived events. */
export const GIT_SENDER_ID = "git-history";

/**
 * The topic of a note the history moved past (a decision superseded, reverted, or old and
 * touched since; a lesson or convention older than `EARLIER_AFTER_YEARS`): kept in memory,
 * filed in an engram of its own (labelled so) that MEMORY.md leaves out.
 */
export const EARLIER_TOPIC = "earlier";

/** `kind` of a commit that is only counted: `noise:<kind>`. */
export function noiseKindName(kind: NoiseKind): string {
  return `noise:${kind}`;
}

/** `kind` of a commit that changed something: `commit:<type>` (`commit` alone from older runs). */
export function changeKindName(type: string): string {
  return `commit:${type}`;
}

/** An event read from git history (commits and their notes), not from a live swarm. */
export function isHistoryEvent(event: Pick<MemoryEvent, "sender">): boolean {
  return event.sender.id === GIT_SENDER_ID && event.sender.role === "operator";
}

/** A history event standing for a commit itself (counted and summarised, never listed). */
export function isHistoryCommit(event: Pick<MemoryEvent, "sender" | "type" | "kind">): boolean {
  return (
    event.type === "memory_event.v1" &&
    isHistoryEvent(event) &&
    (event.kind === "commit" || event.kind.startsWith("commit:") || event.kind.startsWith("noise:"))
  );
}

/** An engram made only of events read from git (`director ingest --from-git`). */
export function isHistoryImport(engram: Pick<Engram, "provenance">): boolean {
  const senders = engram.provenance.senders;
  return senders.length === 1 && senders[0] === GIT_SENDER_ID;
}

/** A history import's engram of the notes the history moved past. */
export function isEarlierHistory(engram: Pick<Engram, "provenance" | "topics">): boolean {
  return engram.topics[0] === EARLIER_TOPIC && isHistoryImport(engram);
}
