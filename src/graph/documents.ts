import type { GraphDocument, LinkedDocumentKind } from "../core/graph/document-links.js";
import { EVIDENCE_PATH } from "../core/versions/documents.js";
import { readConfinedText } from "../repo/confine.js";
import { readVersionTimes } from "../repo/knowledge.js";
import type { Catalog } from "../schema/engram.js";

/**
 * The state and core documents the catalog lists, as the graph reads them: key, value, the
 * entity ids they carry, and when the version that last changed each was made (the version
 * log's `created_at`, the catalog's when the log does not name it). A document that is
 * missing or unreadable is left out here: `director verify` is what reports it.
 */
export async function readGraphDocuments(
  repoDir: string,
  catalog: Catalog,
): Promise<GraphDocument[]> {
  const listed = (catalog.documents ?? []).filter((d) => d.kind === "state" || d.kind === "core");
  if (listed.length === 0) return [];
  const madeAt = await readVersionTimes(repoDir);
  const out: GraphDocument[] = [];
  for (const entry of listed) {
    const text = await readConfinedText(repoDir, entry.path, "document");
    if (text === undefined) continue;
    let doc: { key?: unknown; value?: unknown; version?: unknown; entities?: unknown };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch {
      continue;
    }
    if (typeof doc !== "object" || doc === null || typeof doc.key !== "string") continue;
    const entities =
      Array.isArray(doc.entities) && doc.entities.every((e) => typeof e === "string")
        ? (doc.entities as string[])
        : undefined;
    out.push({
      path: entry.path,
      kind: entry.kind as LinkedDocumentKind,
      key: doc.key,
      value: doc.value,
      entities,
      written_at:
        (typeof doc.version === "number" ? madeAt.get(doc.version) : undefined) ??
        catalog.created_at,
    });
  }
  return out;
}

/**
 * The evidence sessions gave learnings engrams hold (`memory/knowledge/evidence.json`), by
 * learning id: a restated claim counts there, not in a copy. Empty when the catalog does not
 * list the file or it is unreadable (verify reports that).
 */
export async function readSessionEvidence(
  repoDir: string,
  catalog: Catalog,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!(catalog.documents ?? []).some((d) => d.path === EVIDENCE_PATH)) return out;
  const text = await readConfinedText(repoDir, EVIDENCE_PATH, "document");
  try {
    const file = JSON.parse(text ?? "") as { records?: { id?: unknown; evidence?: unknown }[] };
    for (const r of file.records ?? []) {
      if (typeof r.id === "string" && typeof r.evidence === "number") out.set(r.id, r.evidence);
    }
  } catch {
    // Damaged: verify's to report; the engrams' own evidence stands.
  }
  return out;
}
