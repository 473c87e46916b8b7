import type { Link, Privacy, Sealed } from "../schema/common.js";
import type { Decision, Engram, EngramBody } from "../schema/engram.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { engramFileSize, sealEngram } from "./engram.js";
import { linkKey } from "./links.js";
import { strictestPrivacy } from "./normalize.js";
import { truncateChars } from "./text.js";
import { batchIdFromIso, secondsBetween } from "./time.js";

export interface CompactionPolicy {
  engram_max_bytes: number;
  stall_seconds: number;
  promote_min_confidence: number;
  /** At most this many groups per slice; the rest are merged into one `other` group. */
  max_groups: number;
}

export const CREATED_BY = "engram-director";
const MAX_TOPICS = 12;
const MAX_ITEM_CHARS = 1000;
const OUTCOME_VALUE = { success: 1, failure: 0, partial: 0.5, abandoned: 0 } as const;
const SIGNAL_ONLY = new Set(["hello", "control", "snapshot", "recall"]);
const NOTE_PREFIX: Record<string, string> = {
  lesson: "Lesson: ",
  convention: "Convention: ",
  incident: "Incident: ",
  question: "Question: ",
};

/** Normalized text used to compare facts across engrams (promotion, deduplication). */
export function factKey(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/** How unexpected an outcome was, given the stated confidence (seed: |confidence - outcome|). */
export function surpriseScore(confidence: number, outcome: keyof typeof OUTCOME_VALUE): number {
  return Math.abs(confidence - OUTCOME_VALUE[outcome]);
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

function clip(text: string): string {
  return truncateChars(text, MAX_ITEM_CHARS);
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

interface GroupItems {
  facts: string[];
  decisions: Decision[];
  tentative: string[];
}

/**
 * Compacts the oldest slice of the buffer into ST engrams. Pure and deterministic: the same
 * events and policy give the same engrams, byte for byte. Extractive: notes become facts and
 * decisions verbatim (already redacted); heartbeats, progress and errors are condensed.
 */
export function compactSlice(events: readonly MemoryEvent[], policy: CompactionPolicy): Engram[] {
  if (events.length === 0) return [];
  const last = events[events.length - 1] as MemoryEvent;
  const version = batchIdFromIso(last.received_at);

  const groups = new Map<string, MemoryEvent[]>();
  for (const event of events) {
    const key = groupKeyOf(event);
    const list = groups.get(key);
    if (list) list.push(event);
    else groups.set(key, [event]);
  }
  // Hellos, control messages and recalls carry nothing to remember on their own: they are
  // counted in the provenance of the largest group rather than filling an engram of their own.
  const contentless = [...groups.entries()].filter(([, list]) =>
    list.every((e) => SIGNAL_ONLY.has(e.kind)),
  );
  if (contentless.length > 0 && contentless.length < groups.size) {
    for (const [key] of contentless) groups.delete(key);
    const [, largest] = [...groups.entries()].sort(
      (a, b) => b[1].length - a[1].length || cmp(a[0], b[0]),
    )[0] as [string, MemoryEvent[]];
    largest.push(...contentless.flatMap(([, list]) => list));
    largest.sort((a, b) => a.seq - b.seq);
  }
  // Largest groups keep their own engram; the tail is merged so one slice stays a few files.
  const ordered = [...groups.entries()].sort(
    (a, b) => b[1].length - a[1].length || cmp(a[0], b[0]),
  );
  const kept = ordered.slice(0, Math.max(1, policy.max_groups - 1));
  const rest = ordered.slice(kept.length);
  if (rest.length > 0) {
    const merged = rest.flatMap(([, list]) => list).sort((a, b) => a.seq - b.seq);
    kept.push(["other", merged]);
  }
  const engrams: Engram[] = [];
  for (const [label, list] of kept.sort((a, b) => cmp(a[0], b[0]))) {
    engrams.push(...buildGroupEngrams(label, list, version, policy));
  }
  return engrams.sort((a, b) => cmp(a.engram_id, b.engram_id));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function buildGroupEngrams(
  label: string,
  events: readonly MemoryEvent[],
  version: string,
  policy: CompactionPolicy,
): Engram[] {
  const items: GroupItems = { facts: [], decisions: [], tentative: [] };
  const seenFacts = new Set<string>();
  const seenDecisions = new Set<string>();
  const topicCounts = new Map<string, number>();
  const links: Link[] = [];
  const seenLinks = new Set<string>();
  const sealed: Sealed[] = [];
  const messageTypes: Record<string, number> = {};
  const senders = new Set<string>();
  // Sealed notes stay encrypted, so the engram's privacy is that of its clear content;
  // only an engram made of sensitive events alone is sensitive as a whole.
  let privacy: Privacy = "public";
  let allSensitive = true;
  let notes = 0;
  let decisions = 0;
  let lessons = 0;
  let incidents = 0;
  let errors = 0;
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
  const addFact = (text: string, tentative: boolean) => {
    const fact = clip(text);
    const key = factKey(fact);
    if (seenFacts.has(key)) return;
    seenFacts.add(key);
    items.facts.push(fact);
    if (tentative) items.tentative.push(fact);
  };

  for (const event of events) {
    messageTypes[event.type] = (messageTypes[event.type] ?? 0) + 1;
    senders.add(event.sender.id);
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
      }
    }
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
          const title = clip(event.text);
          const key = factKey(title);
          if (!seenDecisions.has(key)) {
            seenDecisions.add(key);
            items.decisions.push({ title, rationale: clip(event.rationale ?? "") });
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
        addFact(prefix + event.text, tentative || event.kind === "question");
      }
    }
    if (event.kind === "error") errors++;
  }

  const telemetry = condenseTelemetry(events, policy.stall_seconds);
  for (const worker of telemetry.workers) {
    const fact = describeWorker(worker);
    if (fact !== undefined) addFact(fact, true);
  }
  for (const group of telemetry.errors) {
    const retry =
      group.retryable === null ? "" : group.retryable ? ", retryable" : ", not retryable";
    addFact(`Error ${group.error_type} ×${group.count}${retry}: ${group.sample}`, true);
  }

  const topics = topicsFor(label, topicCounts);
  const first = events[0] as MemoryEvent;
  const last = events[events.length - 1] as MemoryEvent;
  const base: Omit<EngramBody, "facts" | "decisions" | "signals"> & {
    signals: Omit<EngramBody["signals"], "truncated">;
  } = {
    version,
    scope: "st",
    created_at: last.received_at,
    source_window: { start_ts: first.received_at, end_ts: last.received_at },
    topics,
    links: links.slice(0, 64),
    provenance: {
      created_by: CREATED_BY,
      run_id: `compact-${version}`,
      event_count: events.length,
      senders: [...senders].sort().slice(0, 64),
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
  const withTelemetry =
    telemetry.workers.length > 0 || telemetry.errors.length > 0 ? { telemetry } : {};
  return packEngrams(base, withTelemetry, items, sealed, policy.engram_max_bytes);
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]?.toUpperCase() + text.slice(1);
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function sortRecord(record: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key] as number;
  return out;
}

function topicsFor(label: string, counts: Map<string, number>): string[] {
  const ranked = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
    .map(([t]) => t);
  const labelTopic = label.replace(/^issue #/, "issue-");
  return [...new Set([labelTopic, ...ranked])].slice(0, MAX_TOPICS);
}

type Telemetry = NonNullable<EngramBody["telemetry"]>;

/** Heartbeats and progress condensed per worker (stages, durations, stalls); errors by type. */
export function condenseTelemetry(events: readonly MemoryEvent[], stallSeconds: number): Telemetry {
  const workers = new Map<string, MemoryEvent[]>();
  const errorGroups = new Map<string, MemoryEvent[]>();
  for (const event of events) {
    if (event.kind === "heartbeat" || event.kind === "progress") {
      const list = workers.get(event.sender.id);
      if (list) list.push(event);
      else workers.set(event.sender.id, [event]);
    } else if (event.kind === "error") {
      const type = event.error_type ?? "unknown";
      const list = errorGroups.get(type);
      if (list) list.push(event);
      else errorGroups.set(type, [event]);
    }
  }
  // Durations and gaps come from each worker's own clock (its `sent_at` deltas): skew
  // between machines cancels out, and batch ingest (one receipt stamp for many events) does
  // not flatten them. Order is still the Director's (buffer sequence).
  const workerSummaries = [...workers.entries()]
    .sort((a, b) => cmp(a[0], b[0]))
    .map(([worker, list]) => {
      const stages: string[] = [];
      let longestGap = 0;
      let span = 0;
      let reportedMs = 0;
      let previous: string | undefined;
      for (const event of list) {
        if (event.stage !== undefined && stages[stages.length - 1] !== event.stage) {
          stages.push(event.stage);
        }
        if (event.kind === "progress" && event.duration_ms !== undefined)
          reportedMs += event.duration_ms;
        if (previous !== undefined) {
          const gap = Math.max(0, secondsBetween(previous, event.sent_at));
          longestGap = Math.max(longestGap, gap);
          span += gap;
        }
        previous = event.sent_at;
      }
      const firstTs = (list[0] as MemoryEvent).received_at;
      const lastTs = (list[list.length - 1] as MemoryEvent).received_at;
      return {
        worker,
        heartbeats: list.filter((e) => e.kind === "heartbeat").length,
        progress_events: list.filter((e) => e.kind === "progress").length,
        stages: stages.slice(-16),
        first_ts: firstTs,
        last_ts: lastTs,
        active_seconds: round3(Math.max(span, reportedMs / 1000)),
        longest_gap_seconds: round3(longestGap),
        stalled: longestGap > stallSeconds,
      };
    });
  const errors = [...errorGroups.entries()]
    .sort((a, b) => b[1].length - a[1].length || cmp(a[0], b[0]))
    .map(([errorType, list]) => {
      const retryValues = new Set(list.map((e) => e.retryable));
      const retryable =
        retryValues.size === 1 && !retryValues.has(undefined)
          ? (list[0]?.retryable as boolean)
          : null;
      const sampleEvent = list.find((e) => e.text !== undefined);
      return {
        error_type: errorType,
        count: list.length,
        retryable,
        sample: clip(sampleEvent?.text ?? (sampleEvent?.sealed ? "(sensitive, sealed)" : "")).slice(
          0,
          280,
        ),
        workers: [...new Set(list.map((e) => e.sender.id))].sort().slice(0, 32),
      };
    });
  return { workers: workerSummaries.slice(0, 64), errors: errors.slice(0, 32) };
}

function describeWorker(w: Telemetry["workers"][number]): string | undefined {
  if (w.stages.length === 0 && !w.stalled) return undefined;
  const path = w.stages.length > 0 ? `stages ${w.stages.join(" → ")}` : "no stage reported";
  const stall = w.stalled ? `; stalled ${formatDuration(w.longest_gap_seconds)}` : "";
  return `Worker ${w.worker}: ${path} over ${formatDuration(w.active_seconds)}${stall}.`;
}

/**
 * Splits one group's items into as many engrams as `engram_max_bytes` requires, so nothing
 * is dropped for size; only a single item larger than the budget is shortened (counted in
 * `signals.truncated`). Sizes are estimated per item and checked exactly once per engram,
 * so packing stays linear in the number of items.
 */
function packEngrams(
  base: Omit<EngramBody, "facts" | "decisions" | "signals"> & {
    signals: Omit<EngramBody["signals"], "truncated">;
  },
  extra: { telemetry?: Telemetry },
  items: GroupItems,
  sealed: readonly Sealed[],
  maxBytes: number,
): Engram[] {
  type Item = { kind: "fact"; text: string } | { kind: "decision"; value: Decision };
  const queue: Item[] = [
    ...items.decisions.map((value) => ({ kind: "decision" as const, value: { ...value } })),
    ...items.facts.map((text) => ({ kind: "fact" as const, text })),
  ];
  const tentative = new Set(items.tentative);
  const build = (
    chunk: readonly Item[],
    part: number,
    withExtras: boolean,
    cut: number,
  ): EngramBody => {
    const facts = chunk.flatMap((i) => (i.kind === "fact" ? [i.text] : []));
    const body: EngramBody = {
      ...base,
      facts,
      decisions: chunk.flatMap((i) => (i.kind === "decision" ? [i.value] : [])),
      // The group's events are counted once, on its first part, so counts add up.
      provenance:
        part > 0 ? { ...base.provenance, event_count: 0, part: part + 1 } : base.provenance,
      signals: { ...base.signals, truncated: cut },
      ...(withExtras ? extra : {}),
      ...(withExtras && sealed.length > 0 ? { sealed: [...sealed] } : {}),
    };
    const tentativeHere = facts.filter((f) => tentative.has(f));
    if (tentativeHere.length > 0) body.tentative = tentativeHere;
    return body;
  };
  // Sizes are measured on bodies (placeholder id and hash); only emitted engrams are hashed.
  const size = engramFileSize;
  const cost = (item: Item) =>
    item.kind === "fact"
      ? (Buffer.byteLength(JSON.stringify(item.text), "utf8") + 8) *
        (tentative.has(item.text) ? 2 : 1)
      : Buffer.byteLength(JSON.stringify(item.value), "utf8") + 40;

  const out: Engram[] = [];
  let index = 0;
  while (index < queue.length || out.length === 0) {
    const part = out.length;
    const withExtras = part === 0;
    const overhead = size(build([], part, withExtras, 0)) + 16;
    const chunk: Item[] = [];
    let estimate = overhead;
    while (index < queue.length) {
      const item = queue[index] as Item;
      const c = cost(item);
      if (chunk.length > 0 && estimate + c > maxBytes) break;
      chunk.push(item);
      estimate += c;
      index++;
    }
    let cut = 0;
    let engram = build(chunk, part, withExtras, cut);
    // The estimate can be off by a little: give items back until the engram fits.
    while (size(engram) > maxBytes && chunk.length > 1) {
      chunk.pop();
      index--;
      engram = build(chunk, part, withExtras, cut);
    }
    while (size(engram) > maxBytes && chunk.length === 1 && shrink(chunk[0] as Item)) {
      cut = 1;
      engram = build(chunk, part, withExtras, cut);
    }
    out.push(size(engram) <= maxBytes ? sealEngram(engram) : trimExtras(engram, maxBytes));
    if (chunk.length === 0 && index >= queue.length) break;
  }
  return out;
}

function shrink(
  item: { kind: "fact"; text: string } | { kind: "decision"; value: Decision },
): boolean {
  const half = (text: string) => `${text.slice(0, Math.floor(text.length / 2))}…`;
  if (item.kind === "fact") {
    if (item.text.length <= 40) return false;
    item.text = half(item.text);
    return true;
  }
  if (item.value.rationale.length > 40) {
    item.value.rationale = half(item.value.rationale);
    return true;
  }
  if (item.value.title.length > 40) {
    item.value.title = half(item.value.title);
    return true;
  }
  return false;
}

function trimExtras(body: EngramBody, maxBytes: number): Engram {
  const next: EngramBody = {
    ...body,
    signals: { ...body.signals, truncated: body.signals.truncated + 1 },
  };
  const fits = (b: EngramBody) => engramFileSize(b) <= maxBytes;
  if (next.telemetry) {
    next.telemetry = { workers: [...next.telemetry.workers], errors: [...next.telemetry.errors] };
    while (!fits(next) && next.telemetry.workers.length > 0) next.telemetry.workers.pop();
    while (!fits(next) && next.telemetry.errors.length > 0) next.telemetry.errors.pop();
    if (next.telemetry.workers.length === 0 && next.telemetry.errors.length === 0)
      delete next.telemetry;
  }
  while (!fits(next) && next.links.length > 0) next.links = next.links.slice(0, -1);
  while (!fits(next) && next.sealed && next.sealed.length > 0)
    next.sealed = next.sealed.slice(0, -1);
  while (!fits(next) && next.provenance.senders.length > 0) {
    next.provenance = { ...next.provenance, senders: next.provenance.senders.slice(0, -1) };
  }
  return sealEngram(next);
}
