import type { Catalog } from "../../schema/engram.js";
import { learningId } from "../graph/learnings.js";
import { documentText } from "../versions/documents.js";
import { knowledgeFiles } from "../versions/knowledge-view.js";
import type { KnowledgeItem } from "./knowledge.js";

/*
 * The knowledge sessions consolidated (`memory/knowledge/<kind>.json`) is proposed beside the
 * engrams and reaches the pushed branch the same way: its records are reviewed item by item
 * with the verdict engram items get (withhold.ts), so a secret-like record is held too.
 */

/** What the verdict sees of an item, and where it comes from (an engram, or a knowledge file). */
export type ItemVerdict = (
  item: Omit<KnowledgeItem, "id" | "engram_id" | "scope">,
  from: { engram_id: string; scope: "st" | "lt" },
) => boolean;

interface StoredRecord {
  id?: unknown;
  text?: unknown;
  rationale?: unknown;
}

interface StoredFile {
  kind: "fact" | "lesson" | "convention" | "decision";
  records: StoredRecord[];
  /** Ids of secret-like records a reviewer released (`director release`): read by the guard. */
  released?: unknown;
}

/** A knowledge record main does not hold yet, as a review item (`director reject/release ID`). */
export interface ProposedRecord {
  /** The item id (`learningId` of its text): the id an engram stating it would give it. */
  id: string;
  /** The knowledge file it is in. */
  path: string;
  kind: StoredFile["kind"];
  text: string;
  rationale?: string;
}

function parsed(text: string | undefined): StoredFile | undefined {
  if (text === undefined) return undefined;
  try {
    const doc = JSON.parse(text) as Partial<StoredFile>;
    return Array.isArray(doc.records) && typeof doc.kind === "string"
      ? (doc as StoredFile)
      : undefined;
  } catch {
    // A damaged file is verify's to report; nothing is taken out of it.
    return undefined;
  }
}

function itemOf(path: string, kind: StoredFile["kind"], r: StoredRecord): ProposedRecord | null {
  // A sealed record has no clear text: the sealed flag is the engram's, not a hold.
  if (typeof r.text !== "string" || r.text.trim() === "") return null;
  return {
    id: learningId(r.text),
    path,
    kind,
    text: r.text,
    ...(typeof r.rationale === "string" && r.rationale !== "" ? { rationale: r.rationale } : {}),
  };
}

/** A proposed record as a review item: its knowledge file stands where an engram would. */
export function recordItem(r: ProposedRecord): KnowledgeItem {
  return {
    id: r.id,
    kind: r.kind,
    text: r.text,
    ...(r.rationale === undefined ? {} : { rationale: r.rationale }),
    engram_id: r.path,
    scope: "lt",
  };
}

/** The clear records of the catalog's knowledge files whose record id `mainRecords` lacks. */
export function proposedRecords(
  catalog: Catalog,
  files: ReadonlyMap<string, string>,
  mainRecords: ReadonlySet<string>,
): ProposedRecord[] {
  const out: ProposedRecord[] = [];
  for (const entry of knowledgeFiles(catalog)) {
    const doc = parsed(files.get(entry.path));
    for (const r of doc?.records ?? []) {
      if (mainRecords.has(String(r.id))) continue;
      const item = itemOf(entry.path, doc?.kind as StoredFile["kind"], r);
      if (item !== null) out.push(item);
    }
  }
  return out;
}

/** The record ids a knowledge file says a reviewer released; none for a damaged file. */
export function releasedRecordIds(text: string | undefined): Set<string> {
  const released = parsed(text)?.released;
  return new Set(Array.isArray(released) ? released.filter((id) => typeof id === "string") : []);
}

/**
 * The knowledge files with the records `keep` refuses taken out, asking only of records main
 * does not hold (merged memory is never rewritten here), and the secret-like records a
 * reviewer let through (`released`, asked after `keep`) listed in the file's `released`, as an
 * engram lists its own: path to the new text, or null for a file left with no record. Files
 * that keep every record and list no new release are not in the result.
 */
export function keptKnowledgeFiles(
  catalog: Catalog,
  files: ReadonlyMap<string, string>,
  mainRecords: ReadonlySet<string>,
  keep: ItemVerdict,
  released: (path: string) => ReadonlySet<string> | undefined = () => undefined,
): Map<string, string | null> {
  const changed = new Map<string, string | null>();
  for (const entry of knowledgeFiles(catalog)) {
    const text = files.get(entry.path);
    const doc = parsed(text);
    if (doc === undefined) continue;
    const records = doc.records.filter((r) => {
      if (mainRecords.has(String(r.id))) return true;
      const item = itemOf(entry.path, doc.kind, r);
      if (item === null) return true;
      const { id: _id, path: _path, ...seen } = item;
      return keep(seen, { engram_id: entry.path, scope: "lt" });
    });
    const before = releasedRecordIds(text);
    const after = [...new Set([...before, ...(released(entry.path) ?? [])])].sort();
    if (records.length === doc.records.length && after.length === before.size) continue;
    const { released: _released, ...rest } = doc;
    changed.set(
      entry.path,
      records.length === 0
        ? null
        : documentText({ ...rest, records, ...(after.length > 0 ? { released: after } : {}) }),
    );
  }
  return changed;
}
