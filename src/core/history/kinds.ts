import type { MemoryEvent } from "../../schema/memory-event.js";
import type { NoiseKind } from "./classify.js";

/** The sender of every envelope built from history: the marker of history-derived events. */
export const GIT_SENDER_ID = "git-history";

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
