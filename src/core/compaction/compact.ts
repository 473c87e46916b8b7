import type { Link, Privacy, Sealed } from "../../schema/common.js";
import type { Engram, EngramBody, Episode, LearningOrigin } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { learningIdOfFact, normalizeClaim } from "../graph/learnings.js";
import { isHistoryCommit, isHistoryEvent } from "../history/kinds.js";
import { strictestPrivacy } from "../ingest/event-keys.js";
import { originOfEvent } from "../ingest/seed-senders.js";
import { sha256Hex } from "../model/canonical.js";
import { linkKey } from "../model/links.js";
import { clipItem, compareText, round3 } from "../model/text.js";
import { batchIdFromIso } from "../model/time.js";
import { episodeVerdict, surpriseScore } from "../sync/policy.js";
import { compactHistory } from "./history.js";
import { type GroupItems, packEngrams } from "./pack.js";
import type { CompactionPolicy } from "./policy.js";
import { condenseTelemetry, describeWorker, telemetrySaysSomething } from "./telemetry.js";

export const CREATED_BY = "engram-director";
const MAX_TOPICS = 12;
const SIGNAL_ONLY = new Set(["hello", "control", "snapshot", "recall"]);
const TELEMETRY_TYPES = new Set([
  "heartbeat.v1",
  "task_progress.v1",
  "worker_error.v1",
  "protocol_hello.v1",
]);
const NOTE_PREFIX: Record<string, string> = {
  lesson: "Lesson: ",
  convention: "Convention: ",
  incident: "Incident: ",
  question: "Question: ",
};

/**
 * Normalized text used to compare facts across engrams (promotion, deduplication): the one
 * claim normalizer that learnings and session consolidation use too.
 */
export function factKey(text: string): string {
  return normalizeClaim(text);
}

/** At most this many episodes per engram: the rest still count in `signals.max_surprise`. */
const MAX_EPISODES = 32;

/**
 * The episodes an engram keeps when a group has more than it can hold: the ones the sync
 * policy (at its default thresholds) would send first, then the most surprising, so a cap
 * never drops a surprise in favour of a routine success. Kept in the order they happened.
 */
function keptEpisodes(all: readonly Episode[]): Episode[] {
  if (all.length <= MAX_EPISODES) return [...all];
  const rank = (e: Episode) => episodeVerdict(e).priority ?? 3;
  const order = all.map((e, i) => ({ e, i }));
  order.sort((a, b) => rank(a.e) - rank(b.e) || b.e.surprise - a.e.surprise || a.i - b.i);
  return order
    .slice(0, MAX_EPISODES)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.e);
}

/** A note with an outcome and a confidence, as the engram keeps it for the sync policy. */
function episodeOf(event: MemoryEvent, confidence: number, outcome: Episode["outcome"]): Episode {
  return {
    id: `ep_${sha256Hex(event.key).slice(0, 24)}`,
    at: event.received_at,
    kind: event.kind,
    sender: event.sender.id,
    outcome,
    confidence,
    surprise: round3(surpriseScore(confidence, outcome)),
    privacy: event.privacy,
    ...(event.text !== undefined ? { text: clipItem(event.text) } : {}),
    ...(event.sealed !== undefined ? { sealed: event.sealed } : {}),
  };
}

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
 * The earliest and the latest receipt time of some events. Not the first and the last: a
 * Director's clock can step back (a state folder restored on another machine, an earlier
 * SOURCE_DATE_EPOCH), and a window whose start is after its end is memory no reader accepts.
 */
export function receivedSpan(events: readonly MemoryEvent[]): { start: string; end: string } {
  let start = (events[0] as MemoryEvent).received_at;
  let end = start;
  for (const e of events) {
    if (Date.parse(e.received_at) < Date.parse(start)) start = e.received_at;
    if (Date.parse(e.received_at) > Date.parse(end)) end = e.received_at;
  }
  return { start, end };
}

/** An event whose content an engram is made of: a note, a memory event, a commit, an error. */
function authoredContent(event: MemoryEvent): boolean {
  if (event.kind === "heartbeat" || event.kind === "progress" || event.kind === "recall") {
    return false;
  }
  return (
    event.type === "memory_note.v1" || event.type === "memory_event.v1" || event.kind === "error"
  );
}

/**
 * Compacts the oldest slice of the buffer into ST engrams. Pure and deterministic: the same
 * events and policy give the same engrams, byte for byte. Extractive: notes become facts and
 * decisions verbatim (already redacted); heartbeats, progress and errors are condensed.
 */
export function compactSlice(slice: readonly MemoryEvent[], policy: CompactionPolicy): Engram[] {
  const events = engramEvents(slice);
  if (events.length === 0) return [];
  const version = batchIdFromIso(receivedSpan(events).end);
  // Events read from git history are knowledge to extract, not activity to list.
  const history = events.filter(isHistoryEvent);
  const engrams = compactHistory(history, version, policy, buildGroupEngrams);
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
  const quiet = [...groups.entries()].filter(([, list]) => saysNothing(list, policy.stall_seconds));
  // (History engrams, built above, stand whatever the live slice holds.)
  if (quiet.length === groups.size) {
    return engrams.sort((a, b) => compareText(a.engram_id, b.engram_id));
  }
  if (quiet.length > 0) {
    for (const [key] of quiet) groups.delete(key);
    const [, largest] = [...groups.entries()].sort(
      (a, b) => b[1].length - a[1].length || compareText(a[0], b[0]),
    )[0] as [string, MemoryEvent[]];
    largest.push(...quiet.flatMap(([, list]) => list));
    largest.sort((a, b) => a.seq - b.seq);
  }
  // Largest groups keep their own engram; the tail is merged so one slice stays a few files.
  const ordered = [...groups.entries()].sort(
    (a, b) => b[1].length - a[1].length || compareText(a[0], b[0]),
  );
  const kept = ordered.slice(0, Math.max(1, policy.max_groups - 1));
  const rest = ordered.slice(kept.length);
  if (rest.length > 0) {
    const merged = rest.flatMap(([, list]) => list).sort((a, b) => a.seq - b.seq);
    kept.push(["other", merged]);
  }
  for (const [label, list] of kept.sort((a, b) => compareText(a[0], b[0]))) {
    engrams.push(...buildGroupEngrams(label, list, version, policy, []));
  }
  return engrams.sort((a, b) => compareText(a.engram_id, b.engram_id));
}

/** Pure telemetry or signals, with nothing in it worth an engram of its own. */
function saysNothing(events: readonly MemoryEvent[], stallSeconds: number): boolean {
  const pure = events.every((e) => TELEMETRY_TYPES.has(e.type) || SIGNAL_ONLY.has(e.kind));
  return pure && !telemetrySaysSomething(condenseTelemetry(events, stallSeconds));
}

function buildGroupEngrams(
  label: string,
  events: readonly MemoryEvent[],
  version: string,
  policy: CompactionPolicy,
  summaryFacts: readonly string[],
): Engram[] {
  const items: GroupItems = { facts: [], decisions: [], tentative: [] };
  const evidence = new Map<string, number>();
  const origins = new Map<string, LearningOrigin>();
  // A claim memory already holds is not restated: its evidence is raised instead.
  const restated = (text: string, origin: LearningOrigin | undefined): boolean => {
    const id = policy.known?.find(text);
    if (id === undefined) {
      if (origin) origins.set(learningIdOfFact(text), origin);
      return false;
    }
    evidence.set(id, (evidence.get(id) ?? 0) + 1);
    return true;
  };
  const seenFacts = new Set<string>();
  const seenDecisions = new Set<string>();
  const topicCounts = new Map<string, number>();
  const links: Link[] = [];
  const seenLinks = new Set<string>();
  const sealed: Sealed[] = [];
  const episodes: Episode[] = [];
  const messageTypes: Record<string, number> = {};
  // Who the engram's content came from: a sender of telemetry alone (heartbeats, progress,
  // hellos, recalls, control) counts only when its telemetry became a fact; provenance names
  // authors, not everyone who was online. Counts and message types still cover every event.
  const senders = new Set<string>();
  const allSenders = new Set<string>();
  // Sealed notes stay encrypted, so the engram's privacy is that of its clear content;
  // only an engram made of sensitive events alone is sensitive as a whole.
  let privacy: Privacy = "public";
  let allSensitive = true;
  let notes = 0;
  let decisions = 0;
  let lessons = 0;
  let incidents = 0;
  let errors = 0;
  const errorIds = new Set<string>();
  let redactions = 0;
  let maxSurprise: number | null = null;
  let confidenceSum = 0;
  let confidenceCount = 0;

  const addLink = (link: Link) => {
    const key = linkKey(link);
    if (!seenLinks.has(key)) {
      seenLinks.add(key);
      links.push(link);
    }
  };
  const addFact = (text: string, tentative: boolean, origin?: LearningOrigin) => {
    const fact = clipItem(text);
    const key = factKey(fact);
    if (seenFacts.has(key)) return;
    if (!tentative && restated(fact, origin)) return;
    seenFacts.add(key);
    items.facts.push(fact);
    if (tentative) items.tentative.push(fact);
  };

  for (const event of events) {
    messageTypes[event.type] = (messageTypes[event.type] ?? 0) + 1;
    allSenders.add(event.sender.id);
    if (authoredContent(event)) senders.add(event.sender.id);
    redactions += event.redactions;
    if (event.privacy !== "sensitive") {
      allSensitive = false;
      privacy = strictestPrivacy(privacy, event.privacy);
    }
    for (const topic of event.topics) topicCounts.set(topic, (topicCounts.get(topic) ?? 0) + 1);
    if (event.issue !== undefined && /^#\d+$/.test(event.issue)) {
      addLink({ type: "issue", ref: event.issue });
    }
    for (const link of event.links) addLink(link);
    if (event.sealed) sealed.push(...event.sealed);
    if (event.confidence !== undefined) {
      confidenceSum += event.confidence;
      confidenceCount++;
      if (event.outcome !== undefined) {
        const s = surpriseScore(event.confidence, event.outcome);
        maxSurprise = maxSurprise === null ? s : Math.max(maxSurprise, s);
        if (event.type === "memory_note.v1") {
          episodes.push(episodeOf(event, event.confidence, event.outcome));
        }
      }
    }
    // A commit read from history is counted in its group's summary facts, never listed.
    if (isHistoryCommit(event)) continue;
    if (
      event.type === "memory_note.v1" ||
      (event.type === "memory_event.v1" && event.kind !== "recall")
    ) {
      notes++;
      const tentative =
        event.confidence !== undefined && event.confidence < policy.promote_min_confidence;
      if (event.kind === "decision") {
        decisions++;
        if (event.text !== undefined) {
          const title = clipItem(event.text);
          const key = factKey(title);
          if (!seenDecisions.has(key) && !restated(title, originOfEvent(event))) {
            seenDecisions.add(key);
            items.decisions.push({ title, rationale: clipItem(event.rationale ?? "") });
          }
        }
        continue;
      }
      if (event.kind === "lesson") lessons++;
      if (event.kind === "incident") incidents++;
      if (event.text !== undefined) {
        const prefix =
          NOTE_PREFIX[event.kind] ??
          (event.type === "memory_event.v1" && event.kind !== "fact"
            ? `${capitalize(event.kind)}: `
            : "");
        // Only what a worker chose to remember (a note) is promotable; other memory events,
        // such as commits read from git history, record activity.
        const activity = event.type !== "memory_note.v1";
        addFact(
          prefix + event.text,
          tentative || activity || event.kind === "question",
          originOfEvent(event),
        );
      }
    }
    if (event.kind === "error") {
      const id =
        event.error_id === undefined ? undefined : `${event.sender.id}\u0000${event.error_id}`;
      if (id === undefined || !errorIds.has(id)) errors++;
      if (id !== undefined) errorIds.add(id);
    }
  }

  for (const fact of summaryFacts) addFact(fact, true);
  const telemetry = condenseTelemetry(events, policy.stall_seconds);
  for (const worker of telemetry.workers) {
    const fact = describeWorker(worker);
    if (fact !== undefined) {
      addFact(fact, true);
      senders.add(worker.worker);
    }
  }
  for (const group of telemetry.errors) {
    const retry =
      group.retryable === null ? "" : group.retryable ? ", retryable" : ", not retryable";
    addFact(`Error ${group.error_type} ×${group.count}${retry}: ${group.sample}`, true);
  }

  const topics = topicsFor(label, topicCounts);
  const span = receivedSpan(events);
  const base: Omit<EngramBody, "facts" | "decisions" | "signals"> & {
    signals: Omit<EngramBody["signals"], "truncated">;
  } = {
    version,
    scope: "st",
    created_at: span.end,
    source_window: { start_ts: span.start, end_ts: span.end },
    topics,
    links: links.slice(0, 64),
    provenance: {
      created_by: CREATED_BY,
      run_id: `compact-${version}`,
      event_count: events.length,
      senders: [...(senders.size > 0 ? senders : allSenders)].sort().slice(0, 64),
      message_types: sortRecord(messageTypes),
    },
    privacy: allSensitive ? "sensitive" : privacy,
    signals: {
      notes,
      decisions,
      lessons,
      incidents,
      errors,
      max_surprise: maxSurprise === null ? null : round3(maxSurprise),
      mean_confidence: confidenceCount === 0 ? null : round3(confidenceSum / confidenceCount),
      redactions,
    },
  };
  // Absent rather than empty, so engrams without episodes keep their earlier bytes and hashes.
  const withTelemetry = {
    ...(telemetry.workers.length > 0 || telemetry.errors.length > 0 ? { telemetry } : {}),
    ...(episodes.length > 0 ? { episodes: keptEpisodes(episodes) } : {}),
  };
  return packEngrams(base, withTelemetry, items, sealed, policy.engram_max_bytes, {
    evidence: sortRecord(Object.fromEntries(evidence)),
    origins,
    ...(policy.entities ? { entities: policy.entities } : {}),
  });
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]?.toUpperCase() + text.slice(1);
}

function sortRecord(record: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key] as number;
  return out;
}

function topicsFor(label: string, counts: Map<string, number>): string[] {
  const ranked = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .map(([t]) => t);
  const labelTopic = label.replace(/^issue #/, "issue-");
  return [...new Set([labelTopic, ...ranked])].slice(0, MAX_TOPICS);
}
