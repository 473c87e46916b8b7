import type { Sealed } from "../../schema/common.js";
import type { SessionsConfig } from "../../schema/config.js";
import { learningIdOfFact, normalizeClaim } from "../graph/learnings.js";
import { canonicalJson, sha256Hex } from "../model/canonical.js";
import {
  DOCUMENT_KEY_RE,
  KNOWLEDGE_KINDS,
  type KnowledgeKind,
  SESSION_ITEM_KINDS,
  type SessionItem,
  type SessionItemKind,
  surpriseOf,
} from "./items.js";
import type {
  CoreChange,
  CoreDocument,
  EvidenceRecord,
  KnowledgeRecord,
  MasterState,
  StateDocument,
} from "./master.js";

export type ConsolidationRules = Omit<
  SessionsConfig,
  "buffer_max_items" | "buffer_max_bytes" | "episodes_max" | "documents_max_bytes"
>;

export const DEFAULT_RULES: ConsolidationRules = {
  episodes: "append_all",
  knowledge: "validate_and_merge",
  knowledge_min_confidence: 0.7,
  state: "latest_wins",
  state_history_max: 10,
  core: "careful_merge",
  core_min_confidence: 0.9,
};

/** One ended session: its buffer and the version it started from. */
export interface SessionInput {
  session_id: string;
  parent_version: number;
  items: readonly SessionItem[];
}

export type RejectReason =
  | "low_confidence"
  | "duplicate"
  | "rule_off"
  | "delete_refused"
  | "invalid";

export interface Conflict {
  kind: "state" | "core";
  key: string;
  parent_version: number;
  /** The version after the parent that changed the key. */
  changed_in_version: number;
  resolution: "overwritten" | "held_for_review";
  /** For a held change: the value the session proposed. */
  proposed?: unknown;
}

/** What one session's consolidation did: `director run --json` reports one per session. */
export interface SessionReport {
  session_id: string;
  parent_version: number;
  from_version: number;
  to_version: number;
  applied: Record<SessionItemKind, number>;
  /** Knowledge that already existed: its evidence was raised instead of adding a copy. */
  merged: number;
  /** Each merged item, the record or learning (`l_`) it merged into, and its evidence now. */
  merged_items: { seq: number; kind: SessionItemKind; into: string; evidence: number }[];
  rejected: Record<RejectReason, number>;
  rejected_items: { seq: number; kind: SessionItemKind; reason: RejectReason }[];
  conflicts: Conflict[];
  core_changes: CoreChange[];
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

const REASONS: readonly RejectReason[] = [
  "low_confidence",
  "duplicate",
  "rule_off",
  "delete_refused",
  "invalid",
];

/** What makes two pieces of knowledge the same: normalized text, or equal sealed bytes. */
export function knowledgeKey(text: string | undefined, sealed: readonly Sealed[] | undefined) {
  if (text !== undefined) return textKey(text);
  return `s:${(sealed ?? []).map((s) => s.ct).join(",")}`;
}

// Each step keys all the knowledge memory holds, nearly all of it keyed by the step before:
// a run of many sessions would normalize the same texts again and again.
const textKeys = new Map<string, string>();
const TEXT_KEYS_MAX = 65_536;

function textKey(text: string): string {
  let key = textKeys.get(text);
  if (key === undefined) {
    if (textKeys.size >= TEXT_KEYS_MAX) textKeys.clear();
    key = `t:${normalizeClaim(text)}`;
    textKeys.set(text, key);
  }
  return key;
}

/** An episode's permanent id: derived from its content, so a replayed session adds nothing. */
export function episodeId(sessionId: string, item: SessionItem): string {
  const content = {
    session_id: sessionId,
    seq: item.seq,
    outcome: item.outcome,
    confidence: item.confidence,
    text: item.text,
    sealed: item.sealed,
  };
  return `ep_${sha256Hex(canonicalJson(content)).slice(0, 16)}`;
}

function knowledgeId(key: string): string {
  return `k_${sha256Hex(key).slice(0, 16)}`;
}

function sortedRecord<T>(map: Map<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of [...map.keys()].sort()) out[key] = map.get(key) as T;
  return out;
}

// Every step of a run gets the same learnings (some 40,000 at 10,000 engrams): indexed once.
const learningIndexes = new WeakMap<readonly KnowledgeRecord[], Map<string, KnowledgeRecord>>();

function learningIndex(
  learnings: readonly KnowledgeRecord[],
): ReadonlyMap<string, KnowledgeRecord> {
  let index = learningIndexes.get(learnings);
  if (index === undefined) {
    index = new Map(learnings.map((l) => [l.id, l]));
    learningIndexes.set(learnings, index);
  }
  return index;
}

/** One more session's evidence for a learning; returns the sessions' count now. */
function raise(evidence: Map<string, EvidenceRecord>, id: string, version: number): number {
  const record = evidence.get(id) ?? { id, evidence: 0, version };
  record.evidence++;
  record.version = version;
  evidence.set(id, record);
  return record.evidence;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * careful_merge of one value: objects merge key by key (a key the change leaves out is kept),
 * anything else is replaced. Nothing is deleted: a null anywhere in the change is refused.
 */
export function mergeCoreValue(old: unknown, change: unknown): unknown {
  if (isPlainObject(old) && isPlainObject(change)) {
    const out: Record<string, unknown> = { ...old };
    for (const [k, v] of Object.entries(change)) out[k] = mergeCoreValue(old[k], v);
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
  }
  return change;
}

function containsNull(v: unknown): boolean {
  if (v === null) return true;
  if (Array.isArray(v)) return v.some(containsNull);
  if (isPlainObject(v)) return Object.values(v).some(containsNull);
  return false;
}

/**
 * Consolidates one session into `master`, giving version `master.version + 1`. `learnings` are
 * the claims engrams hold (see `knowledgeFromLearnings`): a session item restating one (the
 * same normalized text, a type prefix such as `Lesson: ` left out, as the compaction's dedup
 * matches) raises its evidence in `master.evidence` instead of adding a copy. Pure: the same
 * master, session and learnings always give the same result, and `master` is not modified.
 */
export function consolidateSession(
  master: MasterState,
  session: SessionInput,
  rules: ConsolidationRules = DEFAULT_RULES,
  learnings: readonly KnowledgeRecord[] = [],
): { master: MasterState; report: SessionReport } {
  const to = master.version + 1;
  const report: SessionReport = {
    session_id: session.session_id,
    parent_version: session.parent_version,
    from_version: master.version,
    to_version: to,
    applied: zeroCounts(SESSION_ITEM_KINDS),
    merged: 0,
    merged_items: [],
    rejected: zeroCounts(REASONS),
    rejected_items: [],
    conflicts: [],
    core_changes: [],
  };
  const hold = (kind: Conflict["kind"], key: string, changedIn: number, proposed: unknown) => {
    report.conflicts.push({
      kind,
      key,
      parent_version: session.parent_version,
      changed_in_version: changedIn,
      resolution: "held_for_review",
      proposed,
    });
  };
  const reject = (item: SessionItem, reason: RejectReason) => {
    report.rejected[reason]++;
    report.rejected_items.push({ seq: item.seq, kind: item.kind, reason });
  };
  const merged = (item: SessionItem, into: string, count: number) => {
    report.merged++;
    report.merged_items.push({ seq: item.seq, kind: item.kind, into, evidence: count });
  };

  const episodes = [...master.episodes];
  const episodeIds = new Set(episodes.map((e) => e.id));
  const knowledge = master.knowledge.map((k) => ({ ...k }));
  const byKey = new Map(knowledge.map((k) => [knowledgeKey(k.text, k.sealed), k]));
  const learningById = learningIndex(learnings);
  const evidence = new Map(master.evidence.map((e) => [e.id, { ...e }]));
  const seenThisSession = new Set<string>();
  // Latest value per key wins inside the session; applied after every item is read.
  const stateWrites = new Map<string, SessionItem>();
  const coreWrites = new Map<string, SessionItem[]>();

  for (const item of session.items) {
    if (item.kind === "episode") {
      if (rules.episodes === "off") reject(item, "rule_off");
      else if (item.outcome === undefined || item.confidence === undefined) reject(item, "invalid");
      else {
        const id = episodeId(session.session_id, item);
        if (episodeIds.has(id)) {
          reject(item, "duplicate");
          continue;
        }
        episodeIds.add(id);
        episodes.push({
          id,
          session_id: session.session_id,
          seq: item.seq,
          outcome: item.outcome,
          confidence: item.confidence,
          surprise: surpriseOf(item.confidence, item.outcome),
          ...(item.text !== undefined ? { text: item.text } : {}),
          ...(item.sealed !== undefined ? { sealed: item.sealed } : {}),
          version: to,
        });
        report.applied.episode++;
      }
    } else if ((KNOWLEDGE_KINDS as readonly string[]).includes(item.kind)) {
      if (rules.knowledge === "off") reject(item, "rule_off");
      else if (item.text === undefined && item.sealed === undefined) reject(item, "invalid");
      else if ((item.confidence ?? 0) <= rules.knowledge_min_confidence)
        reject(item, "low_confidence");
      else {
        const key = knowledgeKey(item.text, item.sealed);
        if (seenThisSession.has(key)) {
          reject(item, "duplicate");
          continue;
        }
        seenThisSession.add(key);
        const existing = byKey.get(key);
        if (existing) {
          existing.evidence++;
          existing.confidence = Math.max(existing.confidence, item.confidence ?? 0);
          merged(item, existing.id, existing.evidence);
          continue;
        }
        const learning =
          item.text !== undefined && learningById.size > 0
            ? learningById.get(learningIdOfFact(item.text))
            : undefined;
        if (learning) {
          const raised = raise(evidence, learning.id, to);
          merged(item, learning.id, learning.evidence + raised);
          continue;
        }
        const record = {
          id: knowledgeId(key),
          kind: item.kind as KnowledgeKind,
          ...(item.text !== undefined ? { text: item.text } : {}),
          ...(item.rationale !== undefined ? { rationale: item.rationale } : {}),
          ...(item.sealed !== undefined ? { sealed: item.sealed } : {}),
          confidence: item.confidence ?? 0,
          evidence: 1,
          version: to,
        };
        knowledge.push(record);
        byKey.set(key, record);
        report.applied[item.kind]++;
      }
    } else if (item.key === undefined || !DOCUMENT_KEY_RE.test(item.key)) {
      reject(item, "invalid");
    } else if (item.kind === "state") {
      const earlier = stateWrites.get(item.key);
      if (earlier) reject(earlier, "duplicate");
      stateWrites.set(item.key, item);
    } else {
      const list = coreWrites.get(item.key) ?? [];
      list.push(item);
      coreWrites.set(item.key, list);
    }
  }

  const state = new Map(Object.entries(master.state));
  for (const [key, item] of [...stateWrites].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const old = state.get(key);
    const conflict = old !== undefined && old.version > session.parent_version;
    if (conflict && rules.state === "hold_conflicts") {
      hold("state", key, old.version, item.value);
      continue;
    }
    if (conflict) {
      report.conflicts.push({
        kind: "state",
        key,
        parent_version: session.parent_version,
        changed_in_version: old.version,
        resolution: "overwritten",
      });
    }
    const history =
      old === undefined
        ? []
        : [
            { value: old.value, version: old.version, session_id: old.session_id },
            ...old.history,
          ].slice(0, rules.state_history_max);
    const doc: StateDocument = {
      key,
      value: item.value,
      version: to,
      session_id: session.session_id,
      history,
    };
    state.set(key, doc);
    report.applied.state++;
  }

  const core = new Map(Object.entries(master.core));
  const coreLog = [...master.core_log];
  for (const [key, items] of [...coreWrites].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const item of items) {
      if (rules.core === "off") {
        reject(item, "rule_off");
        continue;
      }
      if ((item.confidence ?? 0) < rules.core_min_confidence) {
        reject(item, "low_confidence");
        continue;
      }
      if (item.value === undefined || containsNull(item.value)) {
        reject(item, "delete_refused");
        continue;
      }
      const old = core.get(key);
      // A change this same session made (version `to`) is not a conflict.
      if (old !== undefined && old.version > session.parent_version && old.version < to) {
        hold("core", key, old.version, item.value);
        continue;
      }
      const value = mergeCoreValue(old?.value, item.value);
      if (old !== undefined && canonicalJson(old.value) === canonicalJson(value)) continue;
      const change: CoreChange = {
        key,
        session_id: session.session_id,
        version: to,
        old: old?.value ?? null,
        new: value,
      };
      const doc: CoreDocument = { key, value, version: to, session_id: session.session_id };
      core.set(key, doc);
      coreLog.push(change);
      report.core_changes.push(change);
      report.applied.core++;
    }
  }

  report.rejected_items.sort((a, b) => a.seq - b.seq);
  return {
    master: {
      version: to,
      episodes,
      knowledge,
      evidence: Object.values(sortedRecord(evidence)),
      state: sortedRecord(state),
      core: sortedRecord(core),
      core_log: coreLog,
    },
    report,
  };
}

/** Consolidates ended sessions in the order they ended: one version step each. */
export function consolidateSessions(
  master: MasterState,
  sessions: readonly SessionInput[],
  rules: ConsolidationRules = DEFAULT_RULES,
  learnings: readonly KnowledgeRecord[] = [],
): { master: MasterState; reports: SessionReport[] } {
  let current = master;
  const reports: SessionReport[] = [];
  for (const session of sessions) {
    const step = consolidateSession(current, session, rules, learnings);
    current = step.master;
    reports.push(step.report);
  }
  return { master: current, reports };
}
