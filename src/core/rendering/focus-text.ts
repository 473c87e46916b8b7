import { truncateChars } from "../model/text.js";

/** The text of one MEMORY.md item, shared by the sections that make items. */

/** Longest text of one item, in code points, before it is cut with `…`. */
export const FOCUS_ITEM_MAX_CHARS = 280;

const TITLE_MAX_CHARS = 120;

/**
 * One line of plain text: control characters and line breaks would break the bullet-per-item
 * shape; `<` before a tag-like character is escaped so a fact cannot open an HTML comment or
 * block that hides the rest of the rendered file; `](` is escaped so memory text makes no
 * image (which a viewer fetches: a tracking pixel) and no link whose text hides its target.
 */
export function clean(text: string): string {
  return text
    .replace(/\p{Cc}/gu, " ")
    .replace(/\s+/gu, " ")
    .trim()
    .replace(/<(?=[A-Za-z/!?])/g, "\\<")
    .replace(/\]\(/g, "]\\(");
}

/**
 * A decision's bullet text, `**title**: rationale`, cut to fit one item; undefined when the
 * title is empty once cleaned. Engram and session decisions read alike.
 */
export function decisionBody(title: string, rationale: string): string | undefined {
  if (title === "") return undefined;
  const shownTitle = truncateChars(title, TITLE_MAX_CHARS);
  const room = FOCUS_ITEM_MAX_CHARS - codePoints(shownTitle) - 2;
  return rationale === ""
    ? `**${shownTitle}**`
    : `**${shownTitle}**: ${truncateChars(rationale, room)}`;
}

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
