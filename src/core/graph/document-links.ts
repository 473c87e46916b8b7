import { sha256Hex } from "../model/canonical.js";
import type { EntityId, EntityMatcher, LinkableText, LinkedLearning } from "./entities.js";

/*
 * State and core documents (`memory/state/<key>.json`, `memory/core/<key>.json`) in the
 * graph: the entity ids each carries, written by session consolidation, and each document
 * as one item beside the learnings of the engrams, so that freshness and topic context
 * follow what a document is about as they follow what a learning is about.
 */

export type LinkedDocumentKind = "state" | "core";

/** Strings a value holds, depth first in key order: what a document's value says. */
function stringsOf(value: unknown, out: string[], depth = 0): void {
  // Deeper than any sensible document; a hostile one is not walked further.
  if (depth > 32) return;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out, depth + 1);
  else if (typeof value === "object" && value !== null) {
    for (const k of Object.keys(value).sort()) {
      stringsOf((value as Record<string, unknown>)[k], out, depth + 1);
    }
  }
}

/** The text of a document to link: its key and every string of its value. */
export function documentLinkable(key: string, value: unknown): LinkableText {
  const texts = [key];
  stringsOf(value, texts);
  return { texts, links: [], senders: [] };
}

/**
 * The entity ids a state or core document carries (`entities`), and the mentions that
 * named nothing known (logged, never linked). Same key, value and registry: same ids.
 */
export function linkDocumentValue(
  matcher: EntityMatcher,
  key: string,
  value: unknown,
): { entities: EntityId[]; unlinked: string[] } {
  return matcher.linkDocument(documentLinkable(key, value));
}

/** A state or core document as the graph reads it. */
export interface GraphDocument {
  path: string;
  kind: LinkedDocumentKind;
  key: string;
  value: unknown;
  /** Absent in documents written before the field existed: derived from the text then. */
  entities?: readonly EntityId[] | undefined;
  /** ISO-8601: when the version that last changed it was made. */
  written_at: string;
}

/** The one line a document shows as: `core team: {"lead":"ada"}`. */
export function documentLine(kind: LinkedDocumentKind, key: string, value: unknown): string {
  return `${kind} ${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`;
}

/**
 * A document as a graph item shaped like a learning: its id names the file (`l_` and 16 hex
 * digits of the path's digest), so the item keeps its id while its value changes; `engrams`
 * holds its path, which is where it is read from; core documents (identity, values,
 * conventions) count as conventions, state documents as insights.
 */
export function documentItem(doc: GraphDocument, matcher: EntityMatcher): LinkedLearning {
  const linked =
    doc.entities !== undefined
      ? { entities: [...doc.entities], unlinked: [] }
      : linkDocumentValue(matcher, doc.key, doc.value);
  return {
    id: `l_${sha256Hex(`document\n${doc.path}`).slice(0, 16)}`,
    type: doc.kind === "core" ? "convention" : "insight",
    text: documentLine(doc.kind, doc.key, doc.value),
    rationale: null,
    engrams: [doc.path],
    scope: "lt",
    evidence: 1,
    confidence: null,
    origin: null,
    written_at: doc.written_at,
    topics: [doc.key],
    links: [],
    senders: [],
    entities: linked.entities,
    unlinked: linked.unlinked,
  };
}
