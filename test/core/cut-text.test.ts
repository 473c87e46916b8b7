import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clipText, cutText } from "../../src/core/model/text.js";

/** The definition: the last grapheme boundary at or before `maxUnits`, segmenting it all. */
function cutBySegmentingAll(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  let end = 0;
  const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });
  for (const { index, segment } of graphemes.segment(text)) {
    if (index + segment.length > maxUnits) break;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

// Pieces that every rule of grapheme segmentation looks at: CR LF, combining marks, ZWJ
// emoji sequences, skin tones, regional indicator pairs, keycaps, Hangul jamo, an Indic
// conjunct (consonant, virama, consonant), a prepend and a spacing mark, lone surrogates.
const PIECES = [
  "a",
  "Z",
  " ",
  "#",
  "\r",
  "\n",
  "\u0301",
  "\u200d",
  "\ufe0f",
  "\u20e3",
  "👍",
  "👨",
  "\u{1f3fb}",
  "🇺",
  "🇸",
  "\u1100",
  "\u1161",
  "\u11a8",
  "\uac00",
  "\u0915",
  "\u094d",
  "\u0937",
  "\u0600",
  "\u0903",
  "漢",
  "\ud800",
  "\udc00",
];

describe("cutText", () => {
  it("cuts where segmenting the whole text would, for any mix of graphemes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { maxLength: 80 }),
        fc.nat({ max: 200 }),
        (pieces, at) => {
          const text = pieces.join("");
          const maxUnits = text.length === 0 ? 0 : at % (text.length + 1);
          expect(cutText(text, maxUnits)).toBe(cutBySegmentingAll(text, maxUnits));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("cuts long plain text at once, and never inside a grapheme that spans the cut", () => {
    const long = `${"word ".repeat(4000)}e\u0301\u0301 tail`;
    expect(cutText(long, 16_000)).toBe(long.slice(0, 16_000));
    const at = long.indexOf("e\u0301");
    expect(cutText(long, at + 2)).toBe(long.slice(0, at));
    expect(cutText(long, at + 3)).toBe(long.slice(0, at + 3));
    expect(clipText("👨\u200d👩\u200d👧 family", 6)).toBe("…");
  });
});
