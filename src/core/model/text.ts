/**
 * Cuts `text` to at most `maxChars` code points, ending in `…` when cut; never splits a
 * surrogate pair.
 */
export function truncateChars(text: string, maxChars: number): string {
  const max = Math.max(1, maxChars);
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars
    .slice(0, max - 1)
    .join("")
    .trimEnd()}…`;
}

/** Longest fact, decision or sample an engram keeps, in characters. */
export const MAX_ITEM_CHARS = 1000;

export function clipItem(text: string): string {
  return truncateChars(text, MAX_ITEM_CHARS);
}

/** Plain code-unit order, the same on every machine (no locale). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

// Built on first use: creating a segmenter loads ICU data (tens of ms), and most commands
// that import this module never cut text.
let graphemes: Intl.Segmenter | undefined;

function segmenter(): Intl.Segmenter {
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  return graphemes;
}

/**
 * The longest start of `text` of at most `maxUnits` UTF-16 code units that ends on a
 * grapheme boundary: never half of a surrogate pair, an emoji sequence or a letter with its
 * combining marks. Graphemes are those of the ICU that Node ships; the cut never depends on
 * anything else.
 */
export function cutText(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  const cut = Math.max(0, Math.floor(maxUnits));
  // Between two ASCII characters other than CR LF there is always a grapheme boundary, and
  // no rule looks back across it; whether there is a boundary before a character depends on
  // what precedes it and that character only. So segmenting from the last such point before
  // the cut to the code point after it finds the boundaries a segmentation of the whole text
  // finds there, for a few units of work instead of `cut`.
  let from = cut;
  while (from > 0 && !asciiBoundary(text, from)) from--;
  if (from === cut) return text.slice(0, cut);
  let end = from;
  for (const { index, segment } of segmenter().segment(text.slice(from, cut + 2))) {
    if (from + index + segment.length > cut) break;
    end = from + index + segment.length;
  }
  return text.slice(0, end);
}

/** Whether units `at - 1` and `at` of `text` are ASCII and not CR LF. */
function asciiBoundary(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before < 0x80 && after < 0x80 && !(before === 0x0d && after === 0x0a);
}

/** `cutText` with `…` at the end when the text was cut (the `…` counts toward `maxUnits`). */
export function clipText(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  return `${cutText(text, Math.max(0, maxUnits - 1)).trimEnd()}…`;
}

/** Lone surrogates (half of a pair, alone) in `text`. */
export function countLoneSurrogates(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else count++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      count++;
    }
  }
  return count;
}

/** `text` with every lone surrogate replaced by U+FFFD, and how many were replaced. */
export function wellFormed(text: string): { text: string; replaced: number } {
  if (!ANY_SURROGATE.test(text)) return { text, replaced: 0 };
  const replaced = countLoneSurrogates(text);
  if (replaced === 0) return { text, replaced };
  return { text: text.replace(LONE_SURROGATE, "\uFFFD"), replaced };
}

const ANY_SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
