import type { DocumentEntry } from "../../schema/engram.js";
import { StateError } from "../errors.js";
import { isPrivacy, PRIVACIES } from "../ingest/event-keys.js";
import { sha256Hex } from "../model/canonical.js";
import { MEMORY_DIR } from "../model/paths.js";
import type { Conflict } from "./consolidate.js";
import { KNOWLEDGE_KINDS, type KnowledgeKind } from "./items.js";
import type {
  CoreChange,
  CoreDocument,
  EpisodeRecord,
  EvidenceRecord,
  KnowledgeRecord,
  MasterState,
  StateDocument,
} from "./master.js";
import { emptyMaster } from "./master.js";

/*
 * The master state as files under memory/, next to the engrams: one document per state key
 * and per core key, one immutable episode file per consolidated session, one knowledge file
 * per kind, and one file of the evidence sessions gave the learnings engrams hold. Each is
 * listed in the catalog's `documents` section with the sha256 of its bytes.
 */

export const STATE_DIR = `${MEMORY_DIR}/state`;
export const CORE_DIR = `${MEMORY_DIR}/core`;
export const SESSIONS_DIR = `${MEMORY_DIR}/sessions`;
export const KNOWLEDGE_DIR = `${MEMORY_DIR}/knowledge`;
export const DOCUMENT_DIRS: readonly string[] = [STATE_DIR, CORE_DIR, SESSIONS_DIR, KNOWLEDGE_DIR];

/** Changes kept in a core document's log; older ones are in the history of its file. */
export const CORE_CHANGES_MAX = 50;

export const statePath = (key: string) => `${STATE_DIR}/${key}.json`;
export const corePath = (key: string) => `${CORE_DIR}/${key}.json`;
export const sessionPath = (id: string) => `${SESSIONS_DIR}/${id}.json`;
export const knowledgePath = (kind: KnowledgeKind) => `${KNOWLEDGE_DIR}/${kind}.json`;
/** Sessions' evidence for learnings engrams hold; listed as a `knowledge` document. */
export const EVIDENCE_PATH = `${KNOWLEDGE_DIR}/evidence.json`;

/** `memory/state/<key>.json`: the document and the entity ids its value is linked to. */
export interface StateFile extends StateDocument {
  /** Absent in documents written before the field existed. */
  entities?: string[];
}

/** `memory/core/<key>.json`: the document and the latest changes that made it. */
export interface CoreFile extends CoreDocument {
  /** The entity ids the value is linked to; absent in documents written before the field. */
  entities?: string[];
  changes: Omit<CoreChange, "key">[];
}

/** `memory/sessions/<id>.json`: written once, when the session is consolidated; never changed. */
export interface SessionFile {
  session_id: string;
  name: string | null;
  /** The version this session's consolidation made. */
  version: number;
  parent_version: number;
  parent_catalog_hash: string;
  parent_commit: string | null;
  /** The worker's clock, for display. */
  ended_at: string;
  /** The Director's receipt time of the session's end. */
  received_at: string;
  episodes: Omit<EpisodeRecord, "session_id">[];
  /** Keys another version changed since the parent: overwritten (state) or held (core). */
  conflicts: Conflict[];
}

/** `memory/knowledge/<kind>.json`: the accepted knowledge of one kind, with evidence counts. */
export interface KnowledgeFile {
  kind: KnowledgeKind;
  records: Omit<KnowledgeRecord, "kind">[];
}

/**
 * `memory/knowledge/evidence.json`: records shaped like knowledge records (id, evidence,
 * version) without a text, so nothing engrams say is copied, and a proposal rebuilt on a newer
 * main joins them by id like any knowledge file.
 */
export interface EvidenceFile {
  kind: "evidence";
  records: EvidenceRecord[];
}

export function evidenceFile(records: readonly EvidenceRecord[]): EvidenceFile {
  return {
    kind: "evidence",
    records: records.map((r) => ({ id: r.id, evidence: r.evidence, version: r.version })),
  };
}

export function documentText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function documentEntry(path: string, kind: DocumentEntry["kind"], text: string) {
  return {
    path,
    kind,
    hash: `sha256:${sha256Hex(text)}`,
    bytes: Buffer.byteLength(text, "utf8"),
  } satisfies DocumentEntry;
}

/**
 * Fixed key order, so the same document is the same bytes; `entities`, the ids of what the
 * value is linked to (see `linkDocumentValue`), after the value it describes.
 */
export function stateFile(doc: StateDocument, entities?: readonly string[]): StateFile {
  return {
    key: doc.key,
    value: doc.value,
    ...(entities !== undefined ? { entities: [...entities] } : {}),
    version: doc.version,
    session_id: doc.session_id,
    history: doc.history,
  };
}

export function coreFile(
  doc: CoreDocument,
  changes: readonly CoreChange[],
  entities?: readonly string[],
): CoreFile {
  return {
    key: doc.key,
    value: doc.value,
    ...(entities !== undefined ? { entities: [...entities] } : {}),
    version: doc.version,
    session_id: doc.session_id,
    changes: changes.slice(-CORE_CHANGES_MAX).map((c) => ({
      session_id: c.session_id,
      version: c.version,
      old: c.old,
      new: c.new,
    })),
  };
}

/**
 * Fixed key order, so a record merged into (its privacy set later) is the same bytes as one
 * written new; a record without privacy keeps the bytes it had before the field existed.
 */
export function knowledgeFile(kind: KnowledgeKind, records: readonly KnowledgeRecord[]) {
  return {
    kind,
    records: records
      .filter((r) => r.kind === kind)
      .map((r) => ({
        id: r.id,
        ...(r.text !== undefined ? { text: r.text } : {}),
        ...(r.rationale !== undefined ? { rationale: r.rationale } : {}),
        ...(r.sealed !== undefined ? { sealed: r.sealed } : {}),
        ...(r.privacy !== undefined ? { privacy: r.privacy } : {}),
        confidence: r.confidence,
        evidence: r.evidence,
        version: r.version,
      })),
  } satisfies KnowledgeFile;
}

function parse(path: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new StateError(`${path}: expected a JSON object`);
  }
  return value as Record<string, unknown>;
}

function need(path: string, ok: boolean, field: string, what: string): void {
  if (!ok) throw new StateError(`${path}: ${field}: expected ${what}`);
}

/** The master state the documents of a catalog hold, at the catalog's version. */
export interface LoadedMaster {
  master: MasterState;
  /** Core change logs per key (the master's `core_log` only collects a step's new changes). */
  coreChanges: Map<string, CoreChange[]>;
  /** Session files kept, oldest first (the eviction order). */
  sessions: SessionFile[];
}

/** Reads the documents (path -> text) back into the master state at `version`. */
export function loadMaster(
  version: number,
  documents: readonly DocumentEntry[],
  texts: ReadonlyMap<string, string>,
): LoadedMaster {
  const master = emptyMaster(version);
  const coreChanges = new Map<string, CoreChange[]>();
  const sessions: SessionFile[] = [];
  const knowledge = new Map<KnowledgeKind, KnowledgeRecord[]>();
  for (const entry of documents) {
    const text = texts.get(entry.path);
    if (text === undefined) throw new StateError(`${entry.path}: listed in the catalog, missing`);
    const doc = parse(entry.path, text);
    const p = entry.path;
    switch (entry.kind) {
      case "state": {
        need(p, typeof doc.key === "string", "key", "the document key");
        need(p, Number.isInteger(doc.version), "version", "a version");
        need(p, Array.isArray(doc.history), "history", "an array");
        // `entities` is the file's, derived from the value when written: not master state.
        const { entities: _entities, ...state } = doc as unknown as StateFile;
        master.state[state.key] = state;
        break;
      }
      case "core": {
        need(p, typeof doc.key === "string", "key", "the document key");
        need(p, Number.isInteger(doc.version), "version", "a version");
        need(p, Array.isArray(doc.changes), "changes", "an array");
        const { changes, entities: _entities, ...core } = doc as unknown as CoreFile;
        master.core[core.key] = core;
        coreChanges.set(
          core.key,
          changes.map((c) => ({ key: core.key, ...c })),
        );
        break;
      }
      case "session": {
        need(p, typeof doc.session_id === "string", "session_id", "the session id");
        need(p, Array.isArray(doc.episodes), "episodes", "an array");
        sessions.push(doc as unknown as SessionFile);
        break;
      }
      case "knowledge": {
        if (doc.kind === "evidence") {
          need(p, Array.isArray(doc.records), "records", "an array");
          const records = doc.records as EvidenceRecord[];
          records.forEach((r, i) => {
            need(p, typeof r?.id === "string", `records[${i}].id`, "a learning id");
            need(p, Number.isInteger(r.evidence), `records[${i}].evidence`, "a count");
          });
          master.evidence = evidenceFile(records).records.sort((a, b) => cmp(a.id, b.id));
          break;
        }
        const kind = doc.kind as KnowledgeKind;
        need(
          p,
          KNOWLEDGE_KINDS.includes(kind),
          "kind",
          `${KNOWLEDGE_KINDS.join(" | ")} | evidence`,
        );
        need(p, Array.isArray(doc.records), "records", "an array");
        const records = doc.records as Omit<KnowledgeRecord, "kind">[];
        // A record's privacy decides whether its text may leave: a value no reader knows is
        // refused, never read as "not private".
        records.forEach((r, i) => {
          const privacy = (r as { privacy?: unknown } | null)?.privacy;
          need(
            p,
            privacy === undefined || isPrivacy(privacy),
            `records[${i}].privacy`,
            PRIVACIES.join(" | "),
          );
        });
        knowledge.set(
          kind,
          records.map((r) => ({ ...r, kind })),
        );
        break;
      }
    }
  }
  sessions.sort((a, b) => a.version - b.version || (a.session_id < b.session_id ? -1 : 1));
  for (const s of sessions) {
    for (const e of s.episodes) master.episodes.push({ ...e, session_id: s.session_id });
  }
  // Knowledge in a fixed order (by kind, then as stored): evidence merges find the same record.
  for (const kind of KNOWLEDGE_KINDS) master.knowledge.push(...(knowledge.get(kind) ?? []));
  master.state = Object.fromEntries(Object.entries(master.state).sort(([a], [b]) => cmp(a, b)));
  master.core = Object.fromEntries(Object.entries(master.core).sort(([a], [b]) => cmp(a, b)));
  return { master, coreChanges, sessions };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
