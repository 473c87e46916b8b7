/**
 * One group of a slice (an issue, a topic, a folder, `other`) as a running record: what its
 * events say (facts, decisions, links, episodes, counts, telemetry), collected in buffer
 * order, then packed into engrams. Two records of one group, the second of later events,
 * join into the record of all their events, so compaction for room can keep a group's record
 * across its compactions and pack it once (see room.ts): memory made in many small slices
 * then reads as memory made in one, with as many files.
 */
import type { Link, Privacy, Sealed } from "../../schema/common.js";
import type {
  Decision,
  Engram,
  EngramBody,
  Episode,
  ItemProvenance,
  LearningOrigin,
} from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { learningIdOfFact, normalizeClaim } from "../graph/learnings.js";
import { ItemCredit } from "../graph/said-by.js";
import { isHistoryCommit } from "../history/kinds.js";
import { strictestPrivacy } from "../ingest/event-keys.js";
import { originOfEvent } from "../ingest/seed-senders.js";
import { linkKey } from "../model/links.js";
import { clipItem, compareText, round3 } from "../model/text.js";
import { surpriseScore } from "../sync/policy.js";
import { episodeOf, keptEpisodes } from "./episodes.js";
import { type GroupItems, packEngrams } from "./pack.js";
import type { CompactionPolicy } from "./policy.js";
import { condenseState, describeWorker } from "./telemetry.js";
import { type TelemetryState, trackTelemetry } from "./telemetry-state.js";

export const CREATED_BY = "engram-director";
const MAX_TOPICS = 12;
export const MAX_LINKS = 64;
export const MAX_SENDERS = 64;
/** Confidences are summed in millionths: whole numbers add up the same in any grouping. */
const CONFIDENCE_UNIT = 1_000_000;
const NOTE_PREFIX: Record<string, string> = {
  lesson: "Lesson: ",
  convention: "Convention: ",
  incident: "Incident: ",
  question: "Question: ",
};

/**
 * The text a note becomes in an engram: a decision's title, a fact with its kind's prefix
 * (`Convention: x`). Undefined for what is never an item of its own.
 */
export function itemTextOf(event: MemoryEvent): string | undefined {
  if (event.text === undefined || event.type !== "memory_note.v1") return undefined;
  if (event.kind === "decision") return clipItem(event.text);
  return clipItem((NOTE_PREFIX[event.kind] ?? "") + event.text);
}

/**
 * Normalized text used to compare facts across engrams (promotion, deduplication): the one
 * claim normalizer that learnings and session consolidation use too.
 */
export function factKey(text: string): string {
  return normalizeClaim(text);
}

/**
 * The earliest and the latest receipt time of some events. Not the first and the last: a
 * Director's clock can step back (a state folder restored on another machine, an earlier
 * SOURCE_DATE_EPOCH), and a window whose start is after its end is memory no reader accepts.
 */
export function receivedSpan(events: readonly MemoryEvent[]): { start: string; end: string } {
  let start = (events[0] as MemoryEvent).received_at;
  let end = start;
  let startMs = Date.parse(start);
  let endMs = startMs;
  for (const e of events) {
    const at = Date.parse(e.received_at);
    if (at < startMs) {
      start = e.received_at;
      startMs = at;
    }
    if (at > endMs) {
      end = e.received_at;
      endMs = at;
    }
  }
  return { start, end };
}

/** A fact as a group holds it: tentative ones are never promoted. */
export interface GroupFact {
  text: string;
  tentative?: true;
}

/** What a group's events say, in buffer order; every map is a list of pairs, sorted. */
export interface GroupState {
  label: string;
  events: number;
  facts: GroupFact[];
  decisions: Decision[];
  /** Where imported learnings came from, by learning id (the first word on each wins). */
  origins: [string, LearningOrigin][];
  /** Who said each fact and decision and what they linked, by learning id (absent in records
   *  written before it existed). */
  said_by?: [string, ItemProvenance][];
  /** Claims memory already held, restated by the group: learning id and times. */
  evidence: [string, number][];
  topic_counts: [string, number][];
  message_types: [string, number][];
  /** The first 64, in order. */
  links: Link[];
  sealed: Sealed[];
  /** Up to `MAX_GROUP_EPISODES` (see `keptEpisodes`), in order; 32 an engram part. */
  episodes: Episode[];
  /** Authors of content, sorted, the first 64; `all_senders` counts telemetry senders too. */
  senders: string[];
  all_senders: string[];
  privacy: Privacy;
  all_sensitive: boolean;
  notes: number;
  decisions_noted: number;
  lessons: number;
  incidents: number;
  redactions: number;
  max_surprise: number | null;
  confidence_millionths: number;
  confidence_count: number;
  start: string;
  end: string;
  telemetry: TelemetryState;
}

/** The fact keys of records made or joined in this process, so packing does not redo them. */
const factKeys = new WeakMap<GroupState, Set<string>>();

/** Remembers the keys of a record's facts (made as it was built). */
export function rememberFactKeys(state: GroupState, keys: Set<string>): void {
  factKeys.set(state, keys);
}

/**
 * The keys of a record's facts (`factKey`), in the order of its facts: a record made or joined
 * in this process has them already, one per fact, as it kept each fact once.
 */
export function factKeysOf(state: GroupState): string[] {
  const keys = factKeys.get(state);
  if (keys !== undefined && keys.size === state.facts.length) return [...keys];
  return state.facts.map((f) => factKey(f.text));
}

function keysOf(state: GroupState): Set<string> {
  let keys = factKeys.get(state);
  if (keys === undefined) {
    keys = new Set(state.facts.map((f) => factKey(f.text)));
    factKeys.set(state, keys);
  }
  return keys;
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
 * The record of one group's events (in buffer order). Extractive: notes become facts and
 * decisions verbatim (already redacted); telemetry is kept as a running record. A claim
 * memory already holds (`policy.known`) is not restated: its evidence is raised instead.
 */
export function collectGroup(
  label: string,
  events: readonly MemoryEvent[],
  policy: Pick<CompactionPolicy, "known" | "promote_min_confidence">,
): GroupState {
  const facts: GroupFact[] = [];
  const decisions: Decision[] = [];
  const evidence = new Map<string, number>();
  const origins = new Map<string, LearningOrigin>();
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
  const messageTypes = new Map<string, number>();
  const links: Link[] = [];
  const seenLinks = new Set<string>();
  const sealed: Sealed[] = [];
  const episodes: Episode[] = [];
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
  let decided = 0;
  let lessons = 0;
  let incidents = 0;
  let redactions = 0;
  let maxSurprise: number | null = null;
  let confidence = 0;
  let confidenceCount = 0;

  const addLink = (link: Link) => {
    const key = linkKey(link);
    if (!seenLinks.has(key)) {
      seenLinks.add(key);
      links.push(link);
    }
  };
  // Each item's own senders, links, confidence and outcome, beside the union the engram records.
  const credit = new ItemCredit();
  const creditTo = (text: string, event: MemoryEvent) =>
    credit.add(
      learningIdOfFact(text),
      authoredContent(event) ? event.sender.id : undefined,
      eventLinks(event),
      event,
    );
  const addFact = (
    text: string,
    tentative: boolean,
    event: MemoryEvent,
    origin?: LearningOrigin,
  ) => {
    const fact = clipItem(text);
    const key = factKey(fact);
    if (seenFacts.has(key)) {
      creditTo(fact, event);
      return;
    }
    if (!tentative && restated(fact, origin)) return;
    seenFacts.add(key);
    facts.push(tentative ? { text: fact, tentative: true } : { text: fact });
    creditTo(fact, event);
  };

  for (const event of events) {
    messageTypes.set(event.type, (messageTypes.get(event.type) ?? 0) + 1);
    allSenders.add(event.sender.id);
    if (authoredContent(event)) senders.add(event.sender.id);
    redactions += event.redactions;
    if (event.privacy !== "sensitive") {
      allSensitive = false;
      privacy = strictestPrivacy(privacy, event.privacy);
    }
    for (const topic of event.topics) topicCounts.set(topic, (topicCounts.get(topic) ?? 0) + 1);
    for (const link of eventLinks(event)) addLink(link);
    if (event.sealed) sealed.push(...event.sealed);
    if (event.confidence !== undefined) {
      confidence += Math.round(event.confidence * CONFIDENCE_UNIT);
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
        decided++;
        if (event.text !== undefined) {
          const title = clipItem(event.text);
          const key = factKey(title);
          if (seenDecisions.has(key)) creditTo(title, event);
          else if (!restated(title, originOfEvent(event))) {
            seenDecisions.add(key);
            decisions.push({
              title,
              rationale: clipItem(event.rationale ?? ""),
              // Kept with the decision, so promotion can respect and carry it.
              ...(event.confidence !== undefined ? { confidence: event.confidence } : {}),
            });
            creditTo(title, event);
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
          event,
          originOfEvent(event),
        );
      }
    }
  }

  const span = receivedSpan(events);
  const state: GroupState = {
    label,
    events: events.length,
    facts,
    decisions,
    origins: sortedPairs(origins),
    said_by: credit.pairs(),
    evidence: sortedPairs(evidence),
    topic_counts: sortedPairs(topicCounts),
    message_types: sortedPairs(messageTypes),
    links: links.slice(0, MAX_LINKS),
    sealed,
    episodes: keptEpisodes(episodes),
    senders: [...senders].sort().slice(0, MAX_SENDERS),
    all_senders: [...allSenders].sort().slice(0, MAX_SENDERS),
    privacy,
    all_sensitive: allSensitive,
    notes,
    decisions_noted: decided,
    lessons,
    incidents,
    redactions,
    max_surprise: maxSurprise,
    confidence_millionths: confidence,
    confidence_count: confidenceCount,
    start: span.start,
    end: span.end,
    telemetry: trackTelemetry(events),
  };
  rememberFactKeys(state, seenFacts);
  return state;
}

/**
 * A group's engrams in batch `version`: its facts, then `summaryFacts` and the facts its
 * telemetry says (a stall, blocked work, an error pattern), packed within `engram_max_bytes`.
 */
export function packGroup(
  state: GroupState,
  version: string,
  policy: CompactionPolicy,
  summaryFacts: readonly string[] = [],
): Engram[] {
  const items: GroupItems = {
    facts: state.facts.map((f) => f.text),
    decisions: state.decisions.map((d) => ({ ...d })),
    tentative: state.facts.filter((f) => f.tentative).map((f) => f.text),
  };
  const telemetry = condenseState(state.telemetry, policy.stall_seconds);
  const senders = new Set(state.senders);
  let seen: Set<string> | undefined;
  const addFact = (text: string) => {
    const fact = clipItem(text);
    seen ??= new Set(keysOf(state));
    const key = factKey(fact);
    if (seen.has(key)) return;
    seen.add(key);
    items.facts.push(fact);
    items.tentative.push(fact);
  };
  for (const fact of summaryFacts) addFact(fact);
  for (const worker of telemetry.workers) {
    const fact = describeWorker(worker);
    if (fact !== undefined) {
      addFact(fact);
      senders.add(worker.worker);
    }
  }
  for (const group of telemetry.errors) {
    const retry =
      group.retryable === null ? "" : group.retryable ? ", retryable" : ", not retryable";
    addFact(`Error ${group.error_type} ×${group.count}${retry}: ${group.sample}`);
  }

  const errors = state.telemetry.errors.reduce((n, e) => n + e.count, 0);
  const base: Omit<EngramBody, "facts" | "decisions" | "signals"> & {
    signals: Omit<EngramBody["signals"], "truncated">;
  } = {
    version,
    scope: "st",
    created_at: state.end,
    source_window: { start_ts: state.start, end_ts: state.end },
    topics: topicsFor(state.label, state.topic_counts),
    links: state.links.slice(0, MAX_LINKS),
    provenance: {
      created_by: CREATED_BY,
      run_id: `compact-${version}`,
      event_count: state.events,
      senders: [...(senders.size > 0 ? senders : state.all_senders)].sort().slice(0, MAX_SENDERS),
      message_types: Object.fromEntries(state.message_types),
    },
    privacy: state.all_sensitive ? "sensitive" : state.privacy,
    signals: {
      notes: state.notes,
      decisions: state.decisions_noted,
      lessons: state.lessons,
      incidents: state.incidents,
      errors,
      max_surprise: state.max_surprise === null ? null : round3(state.max_surprise),
      mean_confidence:
        state.confidence_count === 0
          ? null
          : round3(state.confidence_millionths / CONFIDENCE_UNIT / state.confidence_count),
      redactions: state.redactions,
    },
  };
  // Absent rather than empty, so engrams without episodes keep their earlier bytes and hashes.
  const withTelemetry = {
    ...(telemetry.workers.length > 0 || telemetry.errors.length > 0 ? { telemetry } : {}),
    ...(state.episodes.length > 0 ? { episodes: [...state.episodes] } : {}),
  };
  return packEngrams(base, withTelemetry, items, state.sealed, policy.engram_max_bytes, {
    evidence: Object.fromEntries(state.evidence),
    origins: new Map(state.origins),
    said: new Map(state.said_by ?? []),
    ...(policy.entities ? { entities: policy.entities } : {}),
  });
}

/** The links an event gives: its own, and its issue as one. */
function eventLinks(event: MemoryEvent): Link[] {
  const issue: Link[] =
    event.issue !== undefined && /^#\d+$/.test(event.issue)
      ? [{ type: "issue", ref: event.issue }]
      : [];
  return [...issue, ...event.links];
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]?.toUpperCase() + text.slice(1);
}

export function sortedPairs<T>(map: ReadonlyMap<string, T>): [string, T][] {
  return [...map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function topicsFor(label: string, counts: readonly [string, number][]): string[] {
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0])).map(([t]) => t);
  const labelTopic = label.replace(/^issue #/, "issue-");
  return [...new Set([labelTopic, ...ranked])].slice(0, MAX_TOPICS);
}
