/**
 * Text printed to a terminal: memory, recall snippets and diffs hold anyone's text, so their
 * control characters (ESC of a colour or a cursor move, OSC of a title or a link, BEL, CR) and
 * bidirectional overrides (U+202E turns what follows around) are shown, not obeyed.
 */

/** Whether a UTF-16 unit is a control or bidirectional formatting character (not LF or TAB). */
function unsafe(code: number): boolean {
  if (code < 0x20) return code !== 0x0a && code !== 0x09;
  if (code >= 0x7f && code <= 0x9f) return true;
  return (
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * The text with each such character written as `\u` and four hex digits; other text unchanged. The form is a
 * JSON string's own escape, so a command whose text output is JSON (`worker hook`, read by
 * the host) stays JSON that parses back to the same text.
 */
export function terminalText(text: string): string {
  let out = "";
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!unsafe(code)) continue;
    out += `${text.slice(last, i)}\\u${code.toString(16).padStart(4, "0")}`;
    last = i + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
