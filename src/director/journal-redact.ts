import { relative } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { quarantineExcerpt } from "../core/ingest/event-keys.js";
import { quarantineLimits } from "../core/ingest/quarantine-plan.js";
import { redactorFor } from "../core/ingest/redact.js";
import { redactStoredEvent, storedEventProblem } from "../core/ingest/stored-event.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { appendQuarantine, type QuarantineRecord, quarantineKey } from "../state/quarantine.js";

/**
 * The events a compaction takes, checked and redacted again as ingest checks and redacts a
 * worker's line: the journal may come from a state folder restored from a branch. A line
 * that is not a buffered event as ingest writes one (`storedEventProblem`: its schema, and
 * no larger than a worker's message could make it) is set aside in the quarantine, naming
 * the file, its seq and the field, and is not compacted; the compaction still drops it from
 * the journal (its caller takes `through_seq` from the events it was given). Loaded only by
 * a cycle (or a compaction for room) with events to compact, so an idle run never loads the
 * scanner. Events of a seq above `checkedAfterSeq` were appended by this process's buffer
 * from lines its Ingestor checked and redacted with these rules (`EventBuffer.heldAtOpen`):
 * they are kept as they are, since what ingest writes is a fixed point of this check and
 * redaction (`test/core/stored-event.test.ts`).
 */
export function redactedEvents(
  ctx: RepoContext,
  events: readonly MemoryEvent[],
  checkedAfterSeq = Number.POSITIVE_INFINITY,
): MemoryEvent[] {
  if (events.length === 0) return [];
  // In seq order: the events this process appended come last.
  let fresh = events.length;
  while (fresh > 0 && (events[fresh - 1] as MemoryEvent).seq > checkedAfterSeq) fresh--;
  if (fresh === 0) return [...events];
  const redactor = redactorFor(ctx.config);
  const maxBytes = ctx.config.agent_bus.max_message_bytes;
  const source = relative(ctx.repoDir, ctx.paths.journal);
  const setAside: QuarantineRecord[] = [];
  const kept: MemoryEvent[] = [];
  for (let i = 0; i < fresh; i++) {
    const event = events[i] as MemoryEvent;
    const text = JSON.stringify(event);
    const problem = storedEventProblem(event, text, maxBytes);
    if (problem === undefined) {
      kept.push(redactStoredEvent(event, redactor).event);
      continue;
    }
    const seq = Number.isSafeInteger(event.seq) ? event.seq : 0;
    setAside.push({
      received_at: receiptTime(),
      source,
      line: seq,
      reason: "journal-invalid",
      detail: `seq ${seq}: ${problem}: set aside, not compacted`,
      excerpt: quarantineExcerpt(text, redactor).text,
      bytes: Buffer.byteLength(text, "utf8"),
      key: quarantineKey(source, seq, text),
    });
  }
  if (setAside.length > 0) {
    appendQuarantine(
      ctx.paths.quarantine,
      setAside,
      undefined,
      quarantineLimits(ctx.config.quarantine),
    );
  }
  for (let i = fresh; i < events.length; i++) kept.push(events[i] as MemoryEvent);
  return kept;
}
