import type { Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { isHistoryEvent } from "../history/kinds.js";
import { compareText } from "../model/text.js";
import { batchIdFromIso } from "../model/time.js";
import { collectGroup, packGroup, receivedSpan } from "./group.js";
import { compactHistory } from "./history.js";
import type { CompactionPolicy } from "./policy.js";
import { condenseTelemetry, telemetrySaysSomething } from "./telemetry.js";

export { CREATED_BY, factKey, receivedSpan } from "./group.js";

const SIGNAL_ONLY = new Set(["hello", "control", "snapshot", "recall"]);
const TELEMETRY_TYPES = new Set([
  "heartbeat.v1",
  "task_progress.v1",
  "worker_error.v1",
  "protocol_hello.v1",
]);

/** The topic an event is filed under: its issue, first topic, first file, or its message family. */
export function groupKeyOf(event: MemoryEvent): string {
  if (event.issue !== undefined) return `issue ${event.issue}`;
  const topic = event.topics[0];
  if (topic !== undefined) return topic;
  const file = event.links.find((l) => l.type === "file");
  if (file !== undefined) return dirnameOf(file.ref);
  switch (event.kind) {
    case "heartbeat":
    case "progress":
    case "hello":
      return "swarm activity";
    case "error":
      return "errors";
    default:
      return event.type.startsWith("memory_") ? "notes" : "control";
  }
}

function dirnameOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : path;
}

/**
 * The events of a slice that engrams are made of. An ended session is consolidated into
 * memory by its own rules (src/core/versions/), and its buffer event dropped with the slice:
 * it is never an engram.
 */
function engramEvents(slice: readonly MemoryEvent[]): readonly MemoryEvent[] {
  return slice.some((e) => e.type === "session_end.v1")
    ? slice.filter((e) => e.type !== "session_end.v1")
    : slice;
}

/**
 * The batch (`version`) the engrams of a slice go to: the second its last event was received
 * in, an ended session's event aside. Undefined when the slice makes no engram.
 */
export function sliceVersion(slice: readonly MemoryEvent[]): string | undefined {
  const events = engramEvents(slice);
  return events.length === 0 ? undefined : batchIdFromIso(receivedSpan(events).end);
}

/**
 * Compacts the oldest slice of the buffer into ST engrams. Pure and deterministic: the same
 * events and policy give the same engrams, byte for byte. Extractive: notes become facts and
 * decisions verbatim (already redacted); heartbeats, progress and errors are condensed.
 */
export function compactSlice(slice: readonly MemoryEvent[], policy: CompactionPolicy): Engram[] {
  const groups = sliceGroups(slice, policy);
  if (groups === undefined) return [];
  const engrams = [...groups.history];
  // One group's record at a time: a slice of 100,000 events holds no two at once.
  for (const [label, events] of groups.live) {
    engrams.push(...packGroup(collectGroup(label, events, policy), groups.version, policy));
  }
  return engrams.sort((a, b) => compareText(a.engram_id, b.engram_id));
}

/** A slice as its groups: the engrams of its history events, the events of its live groups. */
export interface SliceGroups {
  /** The batch its engrams go to. */
  version: string;
  history: Engram[];
  /** Label and events (in buffer order) of each group, by label. */
  live: [string, MemoryEvent[]][];
}

/**
 * The groups of a slice, before packing (undefined when the slice makes no engram). Each
 * event is filed under one group (`groupKeyOf`); quiet telemetry joins the largest group,
 * and beyond the largest `max_groups - 1` the rest are one group, `other`. How large a group
 * is counts `earlier` events of its label too (compaction for room: the slices before it
 * whose records it joins), so the groups kept stay the same from slice to slice.
 */
export function sliceGroups(
  slice: readonly MemoryEvent[],
  policy: CompactionPolicy,
  earlier: ReadonlyMap<string, number> = new Map(),
): SliceGroups | undefined {
  const events = engramEvents(slice);
  if (events.length === 0) return undefined;
  const version = batchIdFromIso(receivedSpan(events).end);
  // Events read from git history are knowledge to extract, not activity to list.
  const history = events.filter(isHistoryEvent);
  const engrams = compactHistory(history, version, policy, (label, list, v, p, summary) =>
    packGroup(collectGroup(label, list, p), v, p, summary),
  );
  const live = history.length === 0 ? events : events.filter((e) => !isHistoryEvent(e));

  const groups = new Map<string, MemoryEvent[]>();
  for (const event of live) {
    const key = groupKeyOf(event);
    const list = groups.get(key);
    if (list) list.push(event);
    else groups.set(key, [event]);
  }
  // A group of pure telemetry (heartbeats, progress, errors, hellos, control messages,
  // recalls) that says nothing (no stall, no blocked work, no failure pattern) is not an
  // engram of its own: its events are counted in the largest group that has something to say
  // (its provenance and telemetry block). A slice with no such group makes no engram; its
  // events are counted in the cycle's compacted events.
  const size = (label: string, list: readonly MemoryEvent[]) =>
    (earlier.get(label) ?? 0) + list.length;
  const largestFirst = (a: [string, MemoryEvent[]], b: [string, MemoryEvent[]]) =>
    size(b[0], b[1]) - size(a[0], a[1]) || compareText(a[0], b[0]);
  const quiet = [...groups.entries()].filter(([, list]) => saysNothing(list, policy.stall_seconds));
  // (History engrams, built above, stand whatever the live slice holds.)
  if (quiet.length === groups.size) return { version, history: engrams, live: [] };
  if (quiet.length > 0) {
    for (const [key] of quiet) groups.delete(key);
    const [, largest] = [...groups.entries()].sort(largestFirst)[0] as [string, MemoryEvent[]];
    largest.push(...quiet.flatMap(([, list]) => list));
    largest.sort((a, b) => a.seq - b.seq);
  }
  // Largest groups keep their own engram; the tail is merged so one slice stays a few files.
  const ordered = [...groups.entries()].sort(largestFirst);
  const kept = ordered.slice(0, Math.max(1, policy.max_groups - 1));
  const rest = ordered.slice(kept.length);
  if (rest.length > 0) {
    const merged = rest.flatMap(([, list]) => list).sort((a, b) => a.seq - b.seq);
    kept.push(["other", merged]);
  }
  return { version, history: engrams, live: kept.sort((a, b) => compareText(a[0], b[0])) };
}

/** Pure telemetry or signals, with nothing in it worth an engram of its own. */
function saysNothing(events: readonly MemoryEvent[], stallSeconds: number): boolean {
  const pure = events.every((e) => TELEMETRY_TYPES.has(e.type) || SIGNAL_ONLY.has(e.kind));
  return pure && !telemetrySaysSomething(condenseTelemetry(events, stallSeconds));
}
