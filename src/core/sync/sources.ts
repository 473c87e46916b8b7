import type { Privacy } from "../../schema/common.js";
import type { Catalog, Engram } from "../../schema/engram.js";
import { factKey } from "../compaction/compact.js";
import { withoutReplaced } from "../graph/supersession.js";
import { strictestPrivacy } from "../ingest/normalize.js";
import { sha256Hex } from "../model/canonical.js";
import { compareText, truncateChars } from "../model/text.js";
import { knowledgeId, knowledgeKey } from "../versions/consolidate-values.js";
import { knowledgeFactText } from "../versions/items.js";
import type { KnowledgeItem } from "../versions/knowledge-view.js";
import type { SyncCandidate, SyncItem } from "./item.js";
import {
  episodeVerdict,
  evolutionVerdict,
  insightVerdict,
  patternVerdict,
  type SyncThresholds,
} from "./policy.js";

export interface SourceOptions {
  thresholds: SyncThresholds;
  /** Privacy of items that carry figures only (memory versions). */
  default_privacy: Privacy;
  /** Confidence of an insight or lesson when no note behind it stated one. */
  default_confidence: number;
  /** Project name written on every item. */
  project: string;
  /** Local ids requested explicitly (`sync --id`): synced whatever the policy says. */
  requested?: ReadonlySet<string>;
  /** The sessions' knowledge records (`knowledgeItems`): insights beside the engrams' facts. */
  knowledge?: readonly KnowledgeItem[];
}

const digest = (text: string) => sha256Hex(text).slice(0, 24);
const TITLE_CHARS = 120;
const title = (prefix: string, text: string) => truncateChars(`${prefix}${text}`, TITLE_CHARS);
const byId = (a: SyncCandidate, b: SyncCandidate) =>
  compareText(`${a.item.type}:${a.item.local_id}`, `${b.item.type}:${b.item.local_id}`);

/**
 * Every item memory offers an external store, with the policy's verdict: episodes (notes with
 * an outcome and a confidence), insights (facts, lessons and decisions with their evidence,
 * the engrams' and the sessions' knowledge records'), patterns (recurring error types, stalls
 * and lessons) and the current memory version. Pure: the same engrams, knowledge and catalog
 * give the same candidates, in the same order.
 */
export function syncCandidates(
  engrams: readonly Engram[],
  catalog: Catalog,
  options: SourceOptions,
): SyncCandidate[] {
  const requested = options.requested ?? new Set<string>();
  // Only the current side leaves: what a later item replaced is not sent (supersession.ts).
  const current = withoutReplaced(engrams);
  return [
    ...episodeCandidates(engrams, options, requested),
    ...insightCandidates(current, options, requested),
    ...patternCandidates(current, options, requested),
    evolutionCandidate(catalog, options),
  ].sort(byId);
}

function episodeCandidates(
  engrams: readonly Engram[],
  options: SourceOptions,
  requested: ReadonlySet<string>,
): SyncCandidate[] {
  const seen = new Map<string, SyncCandidate>();
  for (const engram of engrams) {
    for (const ep of engram.episodes ?? []) {
      if (seen.has(ep.id)) continue;
      const item: SyncItem = {
        type: "episode",
        local_id: ep.id,
        title:
          ep.text !== undefined ? title("Episode: ", ep.text) : `Episode ${ep.id} (${ep.kind})`,
        privacy: ep.privacy,
        occurred_at: ep.at,
        fields: {
          type: "episode",
          kind: ep.kind,
          confidence: ep.confidence,
          surprise_score: ep.surprise,
          outcome: ep.outcome,
          timestamp: ep.at,
          project: options.project,
          tags: engram.topics.slice(0, 12),
          local_id: ep.id,
          privacy: ep.privacy,
          shareable: ep.privacy === "public",
          sender: ep.sender,
        },
        content: ep.text ?? "",
        ...(ep.sealed !== undefined ? { sealed_content: ep.sealed } : {}),
      };
      seen.set(ep.id, {
        item,
        verdict: episodeVerdict(ep, options.thresholds, requested.has(ep.id)),
      });
    }
  }
  return [...seen.values()];
}

interface FactEvidence {
  text: string;
  /** `decision` for a decision's title; else read from the fact's prefix. */
  kind: string | null;
  rationale: string | null;
  /** The session knowledge records stating it (LT memory, like an LT engram). */
  records: KnowledgeItem[];
  st: Set<string>;
  lt: Set<string>;
  superseded: number;
  confidences: number[];
  privacy: Privacy;
  first: string;
  last: string;
  topics: string[];
}

/** Facts, lessons and decisions (not tentative ones) with how many engrams repeat them. */
function factEvidence(engrams: readonly Engram[]): Map<string, FactEvidence> {
  const facts = new Map<string, FactEvidence>();
  for (const engram of engrams) {
    const tentative = new Set(engram.tentative ?? []);
    const claims = [
      ...engram.facts.filter((t) => !tentative.has(t)).map((text) => ({ text, decision: null })),
      ...engram.decisions.map((d) => ({ text: d.title, decision: d })),
    ];
    for (const { text, decision } of claims) {
      const key = factKey(text);
      let entry = facts.get(key);
      if (entry === undefined) {
        entry = {
          text,
          kind: decision === null ? null : "decision",
          rationale: decision === null || decision.rationale === "" ? null : decision.rationale,
          records: [],
          st: new Set(),
          lt: new Set(),
          superseded: 0,
          confidences: [],
          privacy: engram.privacy,
          first: engram.created_at,
          last: engram.created_at,
          topics: engram.topics.slice(0, 12),
        };
        facts.set(key, entry);
      }
      (engram.scope === "lt" ? entry.lt : entry.st).add(engram.engram_id);
      if (engram.scope === "lt") {
        entry.superseded = Math.max(entry.superseded, engram.supersedes?.length ?? 0);
      }
      if (engram.signals.mean_confidence !== null) {
        entry.confidences.push(engram.signals.mean_confidence);
      }
      entry.privacy = strictestPrivacy(entry.privacy, engram.privacy);
      if (engram.created_at < entry.first) entry.first = engram.created_at;
      if (engram.created_at > entry.last) entry.last = engram.created_at;
    }
  }
  return facts;
}

const mean = (values: readonly number[], fallback: number) =>
  values.length === 0
    ? fallback
    : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;

/**
 * The engrams' claims with the sessions' knowledge records joined in by the same key: a record
 * stating what an engram states is that engram's insight (its privacy the strictest of both,
 * its evidence added), any other is an insight of its own, named by its `k_` id. The id is
 * derived from the text, not read from the file, so a record cannot take another's sync key.
 * Sealed records (no clear text) are left out, as every reader leaves them.
 */
function claimEvidence(
  engrams: readonly Engram[],
  knowledge: readonly KnowledgeItem[],
): Map<string, FactEvidence> {
  const facts = factEvidence(engrams);
  for (const record of knowledge) {
    const text =
      record.kind === "decision" ? record.text : knowledgeFactText(record.kind, record.text);
    const key = factKey(text);
    const entry = facts.get(key) ?? {
      text,
      kind: record.kind,
      rationale: record.rationale,
      records: [],
      st: new Set<string>(),
      lt: new Set<string>(),
      superseded: 0,
      confidences: [],
      privacy: record.privacy,
      first: record.written_at,
      last: record.written_at,
      topics: [],
    };
    entry.records.push(record);
    entry.privacy = strictestPrivacy(entry.privacy, record.privacy);
    entry.confidences.push(record.confidence);
    if (record.written_at < entry.first) entry.first = record.written_at;
    if (record.written_at > entry.last) entry.last = record.written_at;
    facts.set(key, entry);
  }
  return facts;
}

/** The insights of `engrams` (not filtered for supersession): see `syncCandidates`. */
export function insightCandidates(
  engrams: readonly Engram[],
  options: SourceOptions,
  requested: ReadonlySet<string>,
): SyncCandidate[] {
  const out: SyncCandidate[] = [];
  for (const [key, fact] of claimEvidence(engrams, options.knowledge ?? [])) {
    const fromEngrams = fact.st.size + fact.lt.size > 0;
    const first = fact.records[0];
    const localId =
      fromEngrams || first === undefined
        ? `in_${digest(key)}`
        : knowledgeId(knowledgeKey(first.text, undefined));
    const recordEvidence = fact.records.reduce((n, r) => n + r.evidence, 0);
    const fromEngramsEvidence = fromEngrams ? Math.max(fact.st.size, fact.superseded, 1) : 0;
    const evidence = Math.max(fromEngramsEvidence + recordEvidence, 1);
    // A session's record is long-term memory, as an LT engram's fact is.
    const status = fact.lt.size > 0 || fact.records.length > 0 ? "validated" : "pending";
    const confidence = mean(fact.confidences, options.default_confidence);
    const kind =
      fact.kind ?? /^(Lesson|Convention|Incident): /.exec(fact.text)?.[1]?.toLowerCase() ?? "fact";
    const item: SyncItem = {
      type: "insight",
      local_id: localId,
      title: title("", fact.text),
      privacy: fact.privacy,
      occurred_at: fact.first,
      fields: {
        type: kind,
        confidence,
        evidence_count: evidence,
        status,
        discovered: fact.first,
        last_validated: fact.last,
        actionable: kind === "lesson" || kind === "convention",
        project: options.project,
        tags: fact.topics,
        local_id: localId,
        privacy: fact.privacy,
        shareable: fact.privacy === "public",
      },
      content: fact.rationale === null ? fact.text : `${fact.text}\n\nWhy: ${fact.rationale}`,
    };
    out.push({
      item,
      verdict: insightVerdict(
        { confidence, evidence_count: evidence, status },
        options.thresholds,
        requested.has(localId),
      ),
    });
  }
  return out;
}

interface Recurrence {
  name: string;
  pattern_type: string;
  occurrences: number;
  confidence: number;
  first: string;
  last: string;
  privacy: Privacy;
  context: string;
  sample: string;
}

/** Error types, stalled workers and lessons that recur across engrams. */
function recurrences(engrams: readonly Engram[], options: SourceOptions): Map<string, Recurrence> {
  const found = new Map<string, Recurrence>();
  const add = (key: string, engram: Engram, make: () => Recurrence, count: number) => {
    const entry = found.get(key) ?? make();
    entry.occurrences += count;
    entry.privacy = strictestPrivacy(entry.privacy, engram.privacy);
    if (engram.source_window.start_ts < entry.first) entry.first = engram.source_window.start_ts;
    if (engram.source_window.end_ts > entry.last) entry.last = engram.source_window.end_ts;
    found.set(key, entry);
  };
  const base = (engram: Engram) => ({
    occurrences: 0,
    first: engram.source_window.start_ts,
    last: engram.source_window.end_ts,
    privacy: engram.privacy,
  });
  for (const engram of engrams) {
    for (const group of engram.telemetry?.errors ?? []) {
      const make = () => ({
        ...base(engram),
        name: `Error ${group.error_type}`,
        pattern_type: "error",
        // Observed by the Director, not stated by a worker.
        confidence: 1,
        context: `workers: ${group.workers.join(", ")}`,
        sample: group.sample,
      });
      add(`error:${group.error_type}`, engram, make, group.count);
    }
    for (const worker of engram.telemetry?.workers ?? []) {
      if (!worker.stalled) continue;
      const make = () => ({
        ...base(engram),
        name: `Stalls of ${worker.worker}`,
        pattern_type: "stall",
        confidence: 1,
        context: `stage ${worker.stages.join(", ") || "unknown"}`,
        sample: `longest gap ${worker.longest_gap_seconds} s`,
      });
      add(`stall:${worker.worker}`, engram, make, 1);
    }
  }
  for (const [key, fact] of factEvidence(engrams)) {
    if (fact.kind !== null || !fact.text.startsWith("Lesson: ")) continue;
    const occurrences = Math.max(fact.st.size, fact.superseded);
    if (occurrences < 2) continue;
    found.set(`lesson:${key}`, {
      name: fact.text,
      pattern_type: "lesson",
      occurrences,
      confidence: mean(fact.confidences, options.default_confidence),
      first: fact.first,
      last: fact.last,
      privacy: fact.privacy,
      context: fact.topics.join(", "),
      sample: fact.text,
    });
  }
  return found;
}

function patternCandidates(
  engrams: readonly Engram[],
  options: SourceOptions,
  requested: ReadonlySet<string>,
): SyncCandidate[] {
  const out: SyncCandidate[] = [];
  for (const [key, p] of recurrences(engrams, options)) {
    const localId = `pt_${digest(key)}`;
    const item: SyncItem = {
      type: "pattern",
      local_id: localId,
      title: title("", p.name),
      privacy: p.privacy,
      occurred_at: p.first,
      fields: {
        pattern_type: p.pattern_type,
        frequency: p.occurrences,
        first_seen: p.first,
        last_seen: p.last,
        confidence: p.confidence,
        context: p.context,
        project: options.project,
        local_id: localId,
        privacy: p.privacy,
        shareable: p.privacy === "public",
      },
      content: `${p.name}\n\n${p.sample}`,
    };
    out.push({
      item,
      verdict: patternVerdict(
        { occurrences: p.occurrences, confidence: p.confidence },
        options.thresholds,
        requested.has(localId),
      ),
    });
  }
  return out;
}

/** The current memory version as a generation; a later version supersedes it. */
export function evolutionItem(
  catalog: Catalog,
  options: Pick<SourceOptions, "default_privacy" | "project">,
  status: "current" | "superseded" = "current",
): SyncItem {
  const tiers = { st: { files: 0, bytes: 0 }, lt: { files: 0, bytes: 0 } };
  for (const entry of catalog.entries) {
    tiers[entry.scope].files++;
    tiers[entry.scope].bytes += entry.bytes;
  }
  const localId = `gen_${catalog.catalog_version}`;
  return {
    type: "evolution",
    local_id: localId,
    title: `Memory version ${catalog.catalog_version}`,
    privacy: options.default_privacy,
    occurred_at: catalog.created_at,
    fields: {
      generation: catalog.catalog_version,
      status,
      engrams: catalog.entries.length,
      st_files: tiers.st.files,
      st_bytes: tiers.st.bytes,
      lt_files: tiers.lt.files,
      lt_bytes: tiers.lt.bytes,
      catalog_hash: catalog.hash,
      timestamp: catalog.created_at,
      project: options.project,
      local_id: localId,
      privacy: options.default_privacy,
    },
    content: [
      `Memory version ${catalog.catalog_version} (${status})`,
      `${catalog.entries.length} engrams: st ${tiers.st.files} files, ${tiers.st.bytes} bytes; lt ${tiers.lt.files} files, ${tiers.lt.bytes} bytes`,
      `catalog ${catalog.hash}`,
    ].join("\n"),
  };
}

function evolutionCandidate(catalog: Catalog, options: SourceOptions): SyncCandidate {
  return { item: evolutionItem(catalog, options), verdict: evolutionVerdict() };
}

/** A generation that a newer memory version replaced: the same page, its status updated. */
export function supersededItem(previous: SyncItem): SyncItem {
  return {
    ...previous,
    fields: { ...previous.fields, status: "superseded" },
    content: previous.content.replace("(current)", "(superseded)"),
  };
}
