/** The text of one MEMORY.md item, shared by the sections that make items. */

/** Longest text of one item, in code points, before it is cut with `…`. */
export const FOCUS_ITEM_MAX_CHARS = 280;

/**
 * One line of plain text: control characters and line breaks would break the bullet-per-item
 * shape; `<` before a tag-like character is escaped so a fact cannot open an HTML comment or
 * block that hides the rest of the rendered file.
 */
export function clean(text: string): string {
  return text
    .replace(/\p{Cc}/gu, " ")
    .replace(/\s+/gu, " ")
    .trim()
    .replace(/<(?=[A-Za-z/!?])/g, "\\<");
}
