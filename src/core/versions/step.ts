import { EMPTY_REGISTRY } from "../../schema/empty-registry.js";
import type { Catalog, DocumentEntry, Engram } from "../../schema/engram.js";
import type { Registry } from "../../schema/registry.js";
import { StateError } from "../errors.js";
import { linkDocumentValue } from "../graph/document-links.js";
import { type EntityMatcher, entityMatcher } from "../graph/entities.js";
import {
  type EntryForms,
  entryForms,
  sealCatalogWith,
  serializeCatalogWith,
} from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH } from "../model/paths.js";
import {
  type FocusBase,
  type FocusDocuments,
  type FocusKnowledge,
  focusBaseFor,
  renderFocusFor,
} from "../rendering/focus.js";
import {
  type ConsolidationRules,
  consolidateSession,
  type SessionInput,
  type SessionReport,
} from "./consolidate.js";
import {
  coreFile,
  corePath,
  documentEntry,
  documentText,
  EVIDENCE_PATH,
  evidenceFile,
  knowledgeFile,
  knowledgePath,
  type LoadedMaster,
  loadMaster,
  type SessionFile,
  sessionPath,
  stateFile,
  statePath,
} from "./documents.js";
import { KNOWLEDGE_KINDS, type KnowledgeKind } from "./items.js";
import { appendVersion, renderVersionLog, VERSION_LOG_PATH, type VersionRecord } from "./log.js";
import type { KnowledgeRecord, MasterState } from "./master.js";

/** An ended session as the Director received it: every part, in order. */
export interface EndedSession extends SessionInput {
  name: string | null;
  parent_catalog_hash: string;
  parent_commit: string | null;
  ended_at: string;
  /** The Director's receipt time of its last part: the version's time. */
  received_at: string;
}

/** What one version step reads besides the session: memory as it stands, and its settings. */
export interface StepState {
  catalog: Catalog;
  loaded: LoadedMaster;
  log: readonly VersionRecord[];
  /** `renderVersionLog(log)`, when a step before already rendered it. */
  logText?: string;
  /**
   * What the step before computed of `catalog.entries` (their hashed and written forms) and
   * of the engrams (MEMORY.md's part): sessions write no engrams, so every step of a run
   * shares them. Used only while they are of the same entries array.
   */
  forms?: EntryForms;
  focus?: FocusBase;
}

export interface StepSettings {
  rules: ConsolidationRules;
  episodesMax: number;
  documentsMaxBytes: number;
  /** The engrams MEMORY.md may show (see `focusCandidates`), and its budgets. */
  engrams: ReadonlyMap<string, Engram>;
  focus: { memory_md_max_bytes: number; memory_md_max_items: number };
  now?: readonly string[];
  /** The learnings engrams hold (`knowledgeFromLearnings`): duplicates raise their evidence. */
  learnings?: readonly KnowledgeRecord[];
  /**
   * The registry state and core documents are linked to (`config/registry.toml`); absent,
   * they link to files, issues, PRs and commits only.
   */
  registry?: Registry;
}

export interface FileChanges {
  writes: { path: string; text: string }[];
  deletes: string[];
}

export interface VersionStep {
  state: StepState;
  record: VersionRecord;
  report: SessionReport & {
    evicted_sessions: string[];
    /** Mentions in the documents written that name nothing known: logged, not linked. */
    unlinked_mentions?: string[];
  };
  /** Every file this version changes: the callback for version snapshots gets them. */
  files: FileChanges;
}

// Several steps of one run share one registry: it is compiled once.
const matchers = new WeakMap<Registry, EntityMatcher>();
function matcherOf(registry: Registry): EntityMatcher {
  let matcher = matchers.get(registry);
  if (matcher === undefined) {
    matcher = entityMatcher(registry);
    matchers.set(registry, matcher);
  }
  return matcher;
}

/** The kinds of catalog document MEMORY.md shows. */
export const FOCUS_DOCUMENT_KINDS: ReadonlySet<string> = new Set(["state", "core", "knowledge"]);

/**
 * The documents MEMORY.md shows, from the master state: core and state documents, and the
 * clear (never the sealed) knowledge records, newest version first.
 */
export function focusDocuments(master: MasterState): FocusDocuments {
  const knowledge: FocusKnowledge[] = master.knowledge
    .filter((r) => r.text !== undefined)
    .sort((a, b) => b.version - a.version)
    .map((r) => ({
      kind: r.kind,
      text: r.text as string,
      rationale: r.rationale,
      path: knowledgePath(r.kind),
    }));
  return {
    core: Object.values(master.core).map((d) => ({ key: d.key, value: d.value })),
    state: Object.values(master.state).map((d) => ({ key: d.key, value: d.value })),
    knowledge,
  };
}

/** The documents MEMORY.md shows, from their texts; undefined when the catalog lists none. */
export function focusDocumentsOf(
  catalog: Catalog,
  texts: ReadonlyMap<string, string>,
): FocusDocuments | undefined {
  const listed = (catalog.documents ?? []).filter((d) => FOCUS_DOCUMENT_KINDS.has(d.kind));
  if (listed.length === 0) return undefined;
  return focusDocuments(loadMaster(catalog.catalog_version, listed, texts).master);
}

/**
 * One session's consolidation as one version step: the master state at version N + 1, its
 * documents, catalog, version line and MEMORY.md. Pure: the same state, session and settings
 * give the same files, byte for byte.
 */
export function planSessionStep(
  state: StepState,
  session: EndedSession,
  settings: StepSettings,
): VersionStep {
  const { catalog, loaded } = state;
  if (loaded.master.version !== catalog.catalog_version) {
    throw new StateError(
      `master state at version ${loaded.master.version}, catalog at ${catalog.catalog_version}`,
    );
  }
  const step = consolidateSession(loaded.master, session, settings.rules, settings.learnings);
  const master = step.master;
  const to = master.version;
  const docs = new Map<string, DocumentEntry>((catalog.documents ?? []).map((d) => [d.path, d]));
  const writes: FileChanges["writes"] = [];
  const deletes: string[] = [];
  const put = (path: string, kind: DocumentEntry["kind"], value: unknown) => {
    const text = documentText(value);
    docs.set(path, documentEntry(path, kind, text));
    writes.push({ path, text });
  };

  const sessionDoc: SessionFile = {
    session_id: session.session_id,
    name: session.name,
    version: to,
    parent_version: session.parent_version,
    parent_catalog_hash: session.parent_catalog_hash,
    parent_commit: session.parent_commit,
    ended_at: session.ended_at,
    received_at: session.received_at,
    episodes: master.episodes
      .filter((e) => e.version === to && e.session_id === session.session_id)
      .map(({ session_id: _id, ...e }) => e),
    conflicts: step.report.conflicts,
  };
  put(sessionPath(session.session_id), "session", sessionDoc);

  // Each document written carries the entities its value is linked to.
  const matcher = matcherOf(settings.registry ?? EMPTY_REGISTRY);
  const unlinked = new Set<string>();
  const link = (key: string, value: unknown) => {
    const linked = linkDocumentValue(matcher, key, value);
    for (const m of linked.unlinked) unlinked.add(m);
    return linked.entities;
  };
  for (const doc of Object.values(master.state)) {
    if (doc.version === to) {
      put(statePath(doc.key), "state", stateFile(doc, link(doc.key, doc.value)));
    }
  }
  const coreChanges = new Map(loaded.coreChanges);
  for (const change of step.report.core_changes) {
    coreChanges.set(change.key, [...(coreChanges.get(change.key) ?? []), change]);
  }
  for (const doc of Object.values(master.core)) {
    if (doc.version === to) {
      const file = coreFile(doc, coreChanges.get(doc.key) ?? [], link(doc.key, doc.value));
      coreChanges.set(
        doc.key,
        file.changes.map((c) => ({ key: doc.key, ...c })),
      );
      put(corePath(doc.key), "core", file);
    }
  }
  const before = new Map(loaded.master.knowledge.map((k) => [k.id, k]));
  const touched = new Set<KnowledgeKind>();
  for (const k of master.knowledge) {
    const old = before.get(k.id);
    if (old === undefined || old.evidence !== k.evidence || old.confidence !== k.confidence) {
      touched.add(k.kind);
    }
  }
  for (const kind of KNOWLEDGE_KINDS) {
    if (touched.has(kind))
      put(knowledgePath(kind), "knowledge", knowledgeFile(kind, master.knowledge));
  }
  if (master.evidence.some((e) => e.version === to)) {
    put(EVIDENCE_PATH, "knowledge", evidenceFile(master.evidence));
  }

  // Budgets: the oldest sessions' episode files go first (restorable from history); never
  // the one this step writes.
  const sessions = [...loaded.sessions, sessionDoc];
  const evicted: string[] = [];
  let episodes = master.episodes;
  const totalBytes = () => [...docs.values()].reduce((n, d) => n + d.bytes, 0);
  while (
    sessions.length > 1 &&
    (episodes.length > settings.episodesMax || totalBytes() > settings.documentsMaxBytes)
  ) {
    const oldest = sessions.shift() as SessionFile;
    evicted.push(oldest.session_id);
    const path = sessionPath(oldest.session_id);
    docs.delete(path);
    deletes.push(path);
    episodes = episodes.filter((e) => e.session_id !== oldest.session_id);
  }
  if (totalBytes() > settings.documentsMaxBytes) {
    throw new StateError(
      `consolidating session ${session.session_id} takes the session documents to ${totalBytes()} bytes, over [sessions] documents_max_bytes = ${settings.documentsMaxBytes}: raise it`,
    );
  }
  if (episodes.length > settings.episodesMax) {
    throw new StateError(
      `session ${session.session_id} alone holds ${episodes.length} episodes, over [sessions] episodes_max = ${settings.episodesMax}: raise it`,
    );
  }
  // Exactly what reading the files back gives (the core log lives in the core documents,
  // knowledge is grouped by kind), so several steps in one run equal one step per run.
  const next: MasterState = {
    ...master,
    episodes,
    knowledge: KNOWLEDGE_KINDS.flatMap((kind) => master.knowledge.filter((k) => k.kind === kind)),
    core_log: [],
  };

  const createdAt =
    session.received_at > catalog.created_at ? session.received_at : catalog.created_at;
  const forms =
    state.forms?.entries === catalog.entries ? state.forms : entryForms(catalog.entries);
  const nextCatalog = sealCatalogWith(forms, to, createdAt, [...docs.values()]);
  const record: VersionRecord = {
    version: to,
    catalog_hash: nextCatalog.hash,
    created_at: createdAt,
    made_by: { kind: "session", session_id: session.session_id },
    counts: {
      engrams: nextCatalog.entries.length,
      episodes: episodes.length,
      facts: next.knowledge.length,
      state: Object.keys(next.state).length,
      core: Object.keys(next.core).length,
    },
  };
  const log = appendVersion(state.log, record);
  // One line per version: the step before rendered all but the last.
  const logText = `${state.logText ?? renderVersionLog(state.log)}${renderVersionLog([record])}`;
  writes.push({ path: VERSION_LOG_PATH, text: logText });
  writes.push({ path: CATALOG_PATH, text: serializeCatalogWith(nextCatalog, forms) });
  const focusBase = focusBaseFor(nextCatalog, settings.engrams, settings.focus, state.focus);
  const focus = renderFocusFor(
    nextCatalog,
    settings.engrams,
    settings.focus,
    settings.now,
    focusDocuments(next),
    focusBase,
  );
  writes.push({ path: FOCUS_PATH, text: focus.text });

  return {
    state: {
      catalog: nextCatalog,
      loaded: { master: next, coreChanges, sessions },
      log,
      logText,
      forms,
      focus: focusBase,
    },
    record,
    report: {
      ...step.report,
      evicted_sessions: evicted,
      ...(unlinked.size > 0 ? { unlinked_mentions: [...unlinked].sort() } : {}),
    },
    files: { writes, deletes },
  };
}
