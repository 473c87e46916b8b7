import type { RepoContext } from "../context/repo-context.js";
import { redactorFor } from "../core/ingest/redact.js";
import { redactStoredEvent } from "../core/ingest/stored-event.js";
import type { MemoryEvent } from "../schema/memory-event.js";

/**
 * The events a compaction takes, redacted again as ingest redacts a worker's line: the
 * journal may come from a state folder restored from a branch. Loaded only by a cycle (or a
 * compaction for room) with events to compact, so an idle run never loads the scanner.
 */
export function redactedEvents(ctx: RepoContext, events: readonly MemoryEvent[]): MemoryEvent[] {
  if (events.length === 0) return [];
  const redactor = redactorFor(ctx.config);
  return events.map((event) => redactStoredEvent(event, redactor).event);
}
