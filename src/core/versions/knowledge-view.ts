import type { Privacy } from "../../schema/common.js";
import type { Catalog } from "../../schema/engram.js";
import type { EntityMatcher, LinkedLearning } from "../graph/entities.js";
import { type LearningType, learningId } from "../graph/learnings.js";
import { EVIDENCE_PATH, loadMaster } from "./documents.js";
import type { KnowledgeKind } from "./items.js";
import { parseVersionLog } from "./log.js";

/**
 * The knowledge sessions consolidated (`memory/knowledge/<kind>.json`) as the readers of
 * memory see it, beside the engrams: recall, topic context, freshness, learnings, MEMORY.md.
 * Sealed records have no clear text and are left out, as sealed engram notes are.
 */
export interface KnowledgeItem {
  path: string;
  kind: KnowledgeKind;
  /** The record's own id (`k_...`). */
  id: string;
  text: string;
  rationale: string | null;
  confidence: number;
  evidence: number;
  /** What the record says of itself (`worker session write --privacy`); absent there: private. */
  privacy: Privacy;
  /** The version that added it. */
  version: number;
  /** ISO-8601: when that version was made (the version log's, else the catalog's). */
  written_at: string;
}

/** When each logged version was made, by number; empty for a missing or damaged log. */
export function versionTimes(logText: string | undefined): Map<number, string> {
  const madeAt = new Map<number, string>();
  try {
    for (const r of logText === undefined ? [] : parseVersionLog(logText))
      madeAt.set(r.version, r.created_at);
  } catch {
    // A damaged log is verify's to report; times then come from the catalog.
  }
  return madeAt;
}

/**
 * The clear knowledge records of the knowledge files the catalog lists, newest version first,
 * from their texts. A file that is missing or unreadable is left out: `director verify` is
 * what reports it, and one damaged file must not hide the rest of memory.
 */
export function knowledgeItems(
  catalog: Catalog,
  texts: ReadonlyMap<string, string>,
  madeAt: ReadonlyMap<number, string>,
): KnowledgeItem[] {
  const out: KnowledgeItem[] = [];
  for (const entry of knowledgeFiles(catalog)) {
    const text = texts.get(entry.path);
    if (text === undefined) continue;
    let master: ReturnType<typeof loadMaster>["master"];
    try {
      master = loadMaster(catalog.catalog_version, [entry], new Map([[entry.path, text]])).master;
    } catch {
      continue;
    }
    for (const r of master.knowledge) {
      if (typeof r.text !== "string" || r.text.trim() === "") continue;
      const version = Number.isInteger(r.version) ? r.version : 0;
      out.push({
        path: entry.path,
        kind: r.kind,
        id: String(r.id),
        text: r.text,
        rationale: typeof r.rationale === "string" && r.rationale !== "" ? r.rationale : null,
        confidence: typeof r.confidence === "number" ? r.confidence : 1,
        evidence: Number.isInteger(r.evidence) && r.evidence > 0 ? r.evidence : 1,
        // loadMaster refused any other value: absent is the notes' default.
        privacy: r.privacy ?? "private",
        version,
        written_at: madeAt.get(version) ?? catalog.created_at,
      });
    }
  }
  return out.sort((a, b) => b.version - a.version);
}

/** The knowledge files (not the evidence file) the catalog lists. */
export function knowledgeFiles(catalog: Catalog) {
  return (catalog.documents ?? []).filter(
    (d) => d.kind === "knowledge" && d.path !== EVIDENCE_PATH,
  );
}

const KNOWLEDGE_TYPE: Record<KnowledgeItem["kind"], LearningType> = {
  decision: "decision",
  convention: "convention",
  lesson: "insight",
  fact: "insight",
};

/**
 * A session's knowledge record (`knowledgeItems`) as a learning: the id an engram stating the
 * same claim would give it (`learningId`), so the two are one learning; `engrams` holds the
 * knowledge file's path, where it is read from. Its entities come from its text and rationale.
 */
export function knowledgeLearning(k: KnowledgeItem, matcher: EntityMatcher): LinkedLearning {
  const linked = matcher.linkDocument({
    texts: k.rationale === null ? [k.text] : [k.text, k.rationale],
    links: [],
    senders: [],
  });
  return {
    id: learningId(k.text),
    type: KNOWLEDGE_TYPE[k.kind],
    text: k.text,
    rationale: k.rationale,
    engrams: [k.path],
    scope: "lt",
    evidence: k.evidence,
    confidence: k.confidence,
    privacy: k.privacy,
    origin: null,
    written_at: k.written_at,
    topics: [],
    links: [],
    senders: [],
    entities: linked.entities,
    unlinked: linked.unlinked,
  };
}
