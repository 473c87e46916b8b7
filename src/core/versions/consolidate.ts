import type { SessionsConfig } from "../../schema/config.js";
import { learningIdOfFact } from "../graph/learnings.js";
import { canonicalJson } from "../model/canonical.js";
import {
  containsNull,
  episodeId,
  knowledgeId,
  knowledgeKey,
  mergeCoreValue,
  mergedPrivacy,
  statedPrivacy,
} from "./consolidate-values.js";
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
  EpisodeRecord,
  EvidenceRecord,
  KnowledgeRecord,
  MasterState,
  StateDocument,
} from "./master.js";

export { episodeId, knowledgeKey, mergeCoreValue } from "./consolidate-values.js";

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

/** One session's step: what each rule reads, and the report every rule adds to. */
interface Step {
  session: SessionInput;
  rules: ConsolidationRules;
  /** The version the step makes. */
  to: number;
  report: SessionReport;
}

function reject(step: Step, item: SessionItem, reason: RejectReason): void {
  step.report.rejected[reason]++;
  step.report.rejected_items.push({ seq: item.seq, kind: item.kind, reason });
}

function merged(step: Step, item: SessionItem, into: string, count: number): void {
  step.report.merged++;
  step.report.merged_items.push({ seq: item.seq, kind: item.kind, into, evidence: count });
}

function hold(
  step: Step,
  kind: Conflict["kind"],
  key: string,
  changedIn: number,
  proposed: unknown,
): void {
  step.report.conflicts.push({
    kind,
    key,
    parent_version: step.session.parent_version,
    changed_in_version: changedIn,
    resolution: "held_for_review",
    proposed,
  });
}

/**
 * `episodes` (append_all): every valid episode is kept once, by its content's id. Like every
 * rule, returns why it refused the item, if it did.
 */
function addEpisode(
  step: Step,
  episodes: EpisodeRecord[],
  ids: Set<string>,
  item: SessionItem,
): RejectReason | undefined {
  const { session, to } = step;
  if (step.rules.episodes === "off") return "rule_off";
  if (item.outcome === undefined || item.confidence === undefined) {
    return "invalid";
  }
  const id = episodeId(session.session_id, item);
  if (ids.has(id)) return "duplicate";
  ids.add(id);
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
  step.report.applied.episode++;
  return undefined;
}

/** The knowledge a step works on: the master's records (copies), keyed, and the learnings. */
interface KnowledgeMemory {
  records: KnowledgeRecord[];
  byKey: Map<string, KnowledgeRecord>;
  learnings: ReadonlyMap<string, KnowledgeRecord>;
  evidence: Map<string, EvidenceRecord>;
  /** Keys this session already stated: a second statement is a duplicate. */
  seen: Set<string>;
}

/**
 * `knowledge` (validate_and_merge): confident enough, then merged into the record or the
 * learning that says the same (its evidence raised), or added as a new record.
 */
function addKnowledge(
  step: Step,
  memory: KnowledgeMemory,
  item: SessionItem,
): RejectReason | undefined {
  const { rules, to } = step;
  if (rules.knowledge === "off") return "rule_off";
  if (item.text === undefined && item.sealed === undefined) return "invalid";
  if ((item.confidence ?? 0) <= rules.knowledge_min_confidence) {
    return "low_confidence";
  }
  const key = knowledgeKey(item.text, item.sealed);
  if (memory.seen.has(key)) return "duplicate";
  memory.seen.add(key);
  const existing = memory.byKey.get(key);
  if (existing) {
    existing.evidence++;
    existing.confidence = Math.max(existing.confidence, item.confidence ?? 0);
    const privacy = mergedPrivacy(existing.privacy, item.privacy);
    if (privacy === undefined) delete existing.privacy;
    else existing.privacy = privacy;
    merged(step, item, existing.id, existing.evidence);
    return undefined;
  }
  const learning =
    item.text !== undefined && memory.learnings.size > 0
      ? memory.learnings.get(learningIdOfFact(item.text))
      : undefined;
  if (learning) {
    const raised = raise(memory.evidence, learning.id, to);
    merged(step, item, learning.id, learning.evidence + raised);
    return undefined;
  }
  const privacy = statedPrivacy(item.privacy);
  const record: KnowledgeRecord = {
    id: knowledgeId(key),
    kind: item.kind as KnowledgeKind,
    ...(item.text !== undefined ? { text: item.text } : {}),
    ...(item.rationale !== undefined ? { rationale: item.rationale } : {}),
    ...(item.sealed !== undefined ? { sealed: item.sealed } : {}),
    ...(privacy !== undefined ? { privacy } : {}),
    confidence: item.confidence ?? 0,
    evidence: 1,
    version: to,
  };
  memory.records.push(record);
  memory.byKey.set(key, record);
  step.report.applied[item.kind]++;
  return undefined;
}

const byKeyOrder = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : 1);

/**
 * `state` (latest_wins, or hold_conflicts): the session's last value of each key replaces
 * the master's, the old one kept in its history; a key changed since the session's parent
 * version is a conflict, overwritten or held for review.
 */
function applyState(
  step: Step,
  master: MasterState["state"],
  writes: ReadonlyMap<string, SessionItem>,
): Map<string, StateDocument> {
  const { session, rules, to, report } = step;
  const state = new Map(Object.entries(master));
  for (const [key, item] of [...writes].sort(byKeyOrder)) {
    const old = state.get(key);
    const conflict = old !== undefined && old.version > session.parent_version;
    if (conflict && rules.state === "hold_conflicts") {
      hold(step, "state", key, old.version, item.value);
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
  return state;
}

/**
 * `core` (careful_merge): only very confident changes, merged key by key, never deleting;
 * a key changed since the session's parent version is held for review. Each change is logged.
 */
function applyCore(
  step: Step,
  master: MasterState,
  writes: ReadonlyMap<string, readonly SessionItem[]>,
): { core: Map<string, CoreDocument>; coreLog: CoreChange[] } {
  const { session, rules, to, report } = step;
  const core = new Map(Object.entries(master.core));
  const coreLog = [...master.core_log];
  for (const [key, items] of [...writes].sort(byKeyOrder)) {
    for (const item of items) {
      if (rules.core === "off") {
        reject(step, item, "rule_off");
        continue;
      }
      if ((item.confidence ?? 0) < rules.core_min_confidence) {
        reject(step, item, "low_confidence");
        continue;
      }
      if (item.value === undefined || containsNull(item.value)) {
        reject(step, item, "delete_refused");
        continue;
      }
      const old = core.get(key);
      // A change this same session made (version `to`) is not a conflict.
      if (old !== undefined && old.version > session.parent_version && old.version < to) {
        hold(step, "core", key, old.version, item.value);
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
  return { core, coreLog };
}

/**
 * Consolidates one session into `master`, giving version `master.version + 1`. `learnings` are
 * the claims engrams hold (see `knowledgeFromLearnings`): a session item restating one (the
 * same normalized text, a type prefix such as `Lesson: ` left out, as the compaction's dedup
 * matches) raises its evidence in `master.evidence` instead of adding a copy. Pure: the same
 * master, session and learnings always give the same result, and `master` is not modified.
 * Items are read in order, each by its kind's rule; state and core writes are applied after
 * every item is read, key by key.
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
  const step: Step = { session, rules, to, report };
  const episodes = [...master.episodes];
  const episodeIds = new Set(episodes.map((e) => e.id));
  const knowledge = master.knowledge.map((k) => ({ ...k }));
  const memory: KnowledgeMemory = {
    records: knowledge,
    byKey: new Map(knowledge.map((k) => [knowledgeKey(k.text, k.sealed), k])),
    learnings: learningIndex(learnings),
    evidence: new Map(master.evidence.map((e) => [e.id, { ...e }])),
    seen: new Set<string>(),
  };
  // Latest value per key wins inside the session; applied after every item is read.
  const stateWrites = new Map<string, SessionItem>();
  const coreWrites = new Map<string, SessionItem[]>();

  for (const item of session.items) {
    let refused: RejectReason | undefined;
    if (item.kind === "episode") refused = addEpisode(step, episodes, episodeIds, item);
    else if ((KNOWLEDGE_KINDS as readonly string[]).includes(item.kind)) {
      refused = addKnowledge(step, memory, item);
    } else if (item.key === undefined || !DOCUMENT_KEY_RE.test(item.key)) {
      reject(step, item, "invalid");
    } else if (item.kind === "state") {
      const earlier = stateWrites.get(item.key);
      if (earlier) reject(step, earlier, "duplicate");
      stateWrites.set(item.key, item);
    } else {
      const list = coreWrites.get(item.key) ?? [];
      list.push(item);
      coreWrites.set(item.key, list);
    }
    if (refused !== undefined) reject(step, item, refused);
  }

  const state = applyState(step, master.state, stateWrites);
  const { core, coreLog } = applyCore(step, master, coreWrites);
  report.rejected_items.sort((a, b) => a.seq - b.seq);
  return {
    master: {
      version: to,
      episodes,
      knowledge,
      evidence: Object.values(sortedRecord(memory.evidence)),
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
