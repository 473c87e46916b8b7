import type { Catalog, DocumentEntry } from "../../schema/engram.js";
import { sha256Hex } from "../model/canonical.js";
import { compareText } from "../model/text.js";
import { documentEntry, documentText } from "../versions/documents.js";

/*
 * The sessions' documents of a proposal replayed on a newer main, file by file against the
 * proposal's base (known by the hashes its catalog lists), as `git merge` would: a document
 * only one side changed is taken from that side, so sessions consolidated on either side are
 * kept. Where both changed it, the kind's rule decides: a session file is written once (the
 * same on both sides); state is `latest_wins` (the proposal lands after main); core is
 * `careful_merge` (main's value stands, like a core change made since a session's parent);
 * knowledge records are joined by id, the higher evidence and confidence kept.
 */

export interface MergedDocuments {
  entries: DocumentEntry[];
  /** Path to text of every document the result holds. */
  files: Map<string, string>;
}

interface Side {
  catalog: Catalog;
  files: ReadonlyMap<string, string>;
}

const hashOf = (text: string) => `sha256:${sha256Hex(text)}`;

interface KnowledgeRecordText {
  id: string;
  evidence?: number;
  confidence?: number;
  version?: number;
}

/** Both sides' records of one knowledge file, joined by id. */
function joinKnowledge(ours: string, theirs: string): string {
  const a = JSON.parse(ours) as { kind: string; records: KnowledgeRecordText[] };
  const b = JSON.parse(theirs) as { kind: string; records: KnowledgeRecordText[] };
  const byId = new Map(a.records.map((r) => [r.id, r]));
  for (const r of b.records) {
    const other = byId.get(r.id);
    if (other === undefined) {
      byId.set(r.id, r);
      continue;
    }
    const higher = (x?: number, y?: number) => Math.max(x ?? 0, y ?? 0);
    byId.set(r.id, {
      ...other,
      evidence: higher(other.evidence, r.evidence),
      // The evidence file's records have no confidence: none is made up for them.
      ...((other.confidence ?? r.confidence) !== undefined
        ? { confidence: higher(other.confidence, r.confidence) }
        : {}),
      version: higher(other.version, r.version),
    });
  }
  // Records stay in the order the onto side has them, the proposal's new ones after.
  return documentText({ kind: a.kind, records: [...byId.values()] });
}

export function mergeDocuments(base: Catalog, proposal: Side, onto: Side): MergedDocuments {
  const kinds = new Map<string, DocumentEntry["kind"]>();
  const baseHash = new Map<string, string>();
  for (const d of base.documents ?? []) baseHash.set(d.path, d.hash);
  for (const d of [
    ...(base.documents ?? []),
    ...(proposal.catalog.documents ?? []),
    ...(onto.catalog.documents ?? []),
  ]) {
    kinds.set(d.path, d.kind);
  }
  const listed = (side: Side) => new Set((side.catalog.documents ?? []).map((d) => d.path));
  const [inProposal, inOnto] = [listed(proposal), listed(onto)];
  const textOf = (side: Side, has: Set<string>, path: string) =>
    has.has(path) ? side.files.get(path) : undefined;

  const files = new Map<string, string>();
  const entries: DocumentEntry[] = [];
  for (const path of [...kinds.keys()].sort(compareText)) {
    const kind = kinds.get(path) as DocumentEntry["kind"];
    const p = textOf(proposal, inProposal, path);
    const o = textOf(onto, inOnto, path);
    const was = baseHash.get(path);
    const changed = (text: string | undefined) => (text === undefined ? was : hashOf(text)) !== was;
    let text: string | undefined;
    if (!changed(p)) text = o;
    else if (!changed(o)) text = p;
    else if (p === undefined || o === undefined) text = p ?? o;
    else if (kind === "state") text = p;
    else if (kind === "knowledge") text = joinKnowledge(o, p);
    else text = o;
    if (text === undefined) continue;
    files.set(path, text);
    entries.push(documentEntry(path, kind, text));
  }
  return { entries, files };
}
