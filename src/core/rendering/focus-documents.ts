import { truncateChars } from "../model/text.js";
import { knowledgeFactText } from "../versions/items.js";
import type { SectionKey } from "./focus-engrams.js";
import { clean, decisionBody, FOCUS_ITEM_MAX_CHARS } from "./focus-text.js";

/**
 * The session documents MEMORY.md shows: the core documents (identity, values, conventions)
 * and the state documents of consolidated sessions first, one item per key; the knowledge
 * sessions consolidated (`memory/knowledge/<kind>.json`) beside the engrams' own, decisions
 * under Decisions and facts, lessons and conventions under Long-term.
 */

/** A document's key and current value, as MEMORY.md shows it. */
export interface FocusDocument {
  key: string;
  value: unknown;
}

/** One clear (not sealed) knowledge record of a session, and the file that holds it. */
export interface FocusKnowledge {
  kind: "fact" | "lesson" | "convention" | "decision";
  text: string;
  rationale?: string | undefined;
  path: string;
}

export interface FocusDocuments {
  core: readonly FocusDocument[];
  state: readonly FocusDocument[];
  /** Newest version first. */
  knowledge?: readonly FocusKnowledge[];
}

/** One bullet line, and the section it belongs to. */
export interface DocumentItem {
  section: SectionKey;
  line: string;
}

/** Core documents first, then state (each in the order given, by key), then knowledge. */
export function documentItems(documents: FocusDocuments | undefined): DocumentItem[] {
  if (documents === undefined) return [];
  const line = (d: FocusDocument) =>
    `- ${truncateChars(clean(`**${d.key}**: ${JSON.stringify(d.value) ?? "null"}`), FOCUS_ITEM_MAX_CHARS)}`;
  const items = [
    ...documents.core.map((d): DocumentItem => ({ section: "core", line: line(d) })),
    ...documents.state.map((d): DocumentItem => ({ section: "state", line: line(d) })),
  ];
  for (const k of documents.knowledge ?? []) {
    const link = ` ([${k.kind}](${k.path}))`;
    if (k.kind === "decision") {
      const body = decisionBody(clean(k.text), clean(k.rationale ?? ""));
      if (body !== undefined) items.push({ section: "decisions", line: `- ${body}${link}` });
      continue;
    }
    const text = clean(knowledgeFactText(k.kind, k.text));
    if (text !== "")
      items.push({ section: "lt", line: `- ${truncateChars(text, FOCUS_ITEM_MAX_CHARS)}${link}` });
  }
  return items;
}
