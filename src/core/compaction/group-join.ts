/**
 * Records of one group joined: what `collectGroup` makes of all their events in order. How
 * compaction for room packs a group once however many compactions it took (see room.ts).
 */
import type { Link, Privacy } from "../../schema/common.js";
import type { Decision, LearningOrigin } from "../../schema/engram.js";
import { ItemCredit } from "../graph/said-by.js";
import { strictestPrivacy } from "../ingest/event-keys.js";
import { linkKey } from "../model/links.js";
import { keptEpisodes } from "./episodes.js";
import {
  factKey,
  factKeysOf,
  type GroupFact,
  type GroupState,
  MAX_LINKS,
  MAX_SENDERS,
  rememberFactKeys,
  sortedPairs,
} from "./group.js";
import { joinTelemetry } from "./telemetry-state.js";

/**
 * The records of one group, oldest first, as one: what `collectGroup` makes of all their
 * events in that order (a fact or decision said again is kept once, where it was first said;
 * the caps keep what they would keep of the whole). None of them is changed.
 */
export function joinGroups(states: readonly GroupState[]): GroupState {
  const first = states[0] as GroupState;
  if (states.length === 1) return first;
  const seenFacts = new Set<string>();
  const facts: GroupFact[] = [];
  const seenDecisions = new Set<string>();
  const decisions: Decision[] = [];
  const links: Link[] = [];
  const seenLinks = new Set<string>();
  const origins = new Map<string, LearningOrigin>();
  const credit = new ItemCredit();
  const evidence = new Map<string, number>();
  const topics = new Map<string, number>();
  const types = new Map<string, number>();
  let telemetry = first.telemetry;
  let start = first.start;
  let end = first.end;
  let maxSurprise: number | null = null;
  let privacy: Privacy = "public";
  for (const s of states) {
    // The keys each record was made with, not normalized again (most come from this process).
    const keys = factKeysOf(s);
    for (const [i, f] of s.facts.entries()) {
      const key = keys[i] as string;
      if (seenFacts.has(key)) continue;
      seenFacts.add(key);
      facts.push(f);
    }
    for (const d of s.decisions) {
      const key = factKey(d.title);
      if (seenDecisions.has(key)) continue;
      seenDecisions.add(key);
      decisions.push(d);
    }
    for (const l of s.links) {
      const key = linkKey(l);
      if (links.length >= MAX_LINKS || seenLinks.has(key)) continue;
      seenLinks.add(key);
      links.push(l);
    }
    for (const [id, origin] of s.origins) if (!origins.has(id)) origins.set(id, origin);
    credit.join(s.said_by);
    addPairs(evidence, s.evidence);
    addPairs(topics, s.topic_counts);
    addPairs(types, s.message_types);
    if (s !== first) telemetry = joinTelemetry(telemetry, s.telemetry);
    if (Date.parse(s.start) < Date.parse(start)) start = s.start;
    if (Date.parse(s.end) > Date.parse(end)) end = s.end;
    if (s.max_surprise !== null) {
      maxSurprise = maxSurprise === null ? s.max_surprise : Math.max(maxSurprise, s.max_surprise);
    }
    privacy = strictestPrivacy(privacy, s.privacy);
  }
  const sum = (pick: (s: GroupState) => number) => states.reduce((n, s) => n + pick(s), 0);
  const joined: GroupState = {
    label: first.label,
    events: sum((s) => s.events),
    facts,
    decisions,
    origins: sortedPairs(origins),
    said_by: credit.pairs(),
    evidence: sortedPairs(evidence),
    topic_counts: sortedPairs(topics),
    message_types: sortedPairs(types),
    links,
    sealed: states.flatMap((s) => s.sealed),
    episodes: keptEpisodes(states.flatMap((s) => s.episodes)),
    senders: sortedUnion(states.map((s) => s.senders)),
    all_senders: sortedUnion(states.map((s) => s.all_senders)),
    privacy,
    all_sensitive: states.every((s) => s.all_sensitive),
    notes: sum((s) => s.notes),
    decisions_noted: sum((s) => s.decisions_noted),
    lessons: sum((s) => s.lessons),
    incidents: sum((s) => s.incidents),
    redactions: sum((s) => s.redactions),
    max_surprise: maxSurprise,
    confidence_millionths: sum((s) => s.confidence_millionths),
    confidence_count: sum((s) => s.confidence_count),
    start,
    end,
    telemetry,
  };
  rememberFactKeys(joined, seenFacts);
  return joined;
}

function addPairs(into: Map<string, number>, pairs: readonly [string, number][]): void {
  for (const [key, n] of pairs) into.set(key, (into.get(key) ?? 0) + n);
}

function sortedUnion(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())].sort().slice(0, MAX_SENDERS);
}
