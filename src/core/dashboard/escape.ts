/*
 * Everything the dashboard shows comes from memory or state, which a pull request or a
 * worker may have written: it is text, never markup. These two functions are the only ways
 * such text enters the page.
 */

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text for an HTML element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` as `\u003c`, `\u003e`,
 * `\u0026` so no `</script>` or `<!--` can end or bend the block, and the line separators
 * escaped so the text stays one JSON value for any parser. `JSON.parse` reads it back as is.
 */
export function jsonForScriptBlock(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
