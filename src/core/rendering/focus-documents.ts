import { truncateChars } from "../model/text.js";
import { clean, FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

/**
 * The session documents MEMORY.md shows first: the core documents (identity, values,
 * conventions) and the state documents of consolidated sessions, one item per key.
 */

/** A document's key and current value, as MEMORY.md shows it. */
export interface FocusDocument {
  key: string;
  value: unknown;
}

export interface FocusDocuments {
  core: readonly FocusDocument[];
  state: readonly FocusDocument[];
}

/** One bullet line of the Core or State section. */
export interface DocumentItem {
  section: "core" | "state";
  line: string;
}

/** Core documents first, then state, each in the order given (by key). */
export function documentItems(documents: FocusDocuments | undefined): DocumentItem[] {
  if (documents === undefined) return [];
  const line = (d: FocusDocument) =>
    `- ${truncateChars(clean(`**${d.key}**: ${JSON.stringify(d.value) ?? "null"}`), FOCUS_ITEM_MAX_CHARS)}`;
  return [
    ...documents.core.map((d): DocumentItem => ({ section: "core", line: line(d) })),
    ...documents.state.map((d): DocumentItem => ({ section: "state", line: line(d) })),
  ];
}
