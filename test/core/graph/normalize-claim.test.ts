import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeClaim } from "../../../src/core/graph/learnings.js";

/** The definition the fast path for printable ASCII must equal, character for character. */
const definition = (text: string) =>
  text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();

describe("normalizeClaim", () => {
  it("equals NFKC, lower case and folded whitespace on any text", () => {
    const pieces = fc.constantFrom(
      " ",
      "  ",
      "\t",
      "\n",
      "\u00a0",
      "\u2003",
      "ﬁ",
      "Ä",
      "ǅ",
      "x",
      "Y",
    );
    const text = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.string({ unit: "grapheme", maxLength: 30 }),
      fc
        .array(fc.oneof(pieces, fc.string({ maxLength: 4 })), { maxLength: 20 })
        .map((a) => a.join("")),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(normalizeClaim(t)).toBe(definition(t));
      }),
      { numRuns: 5000 },
    );
  });

  it("folds the spaces of printable ASCII at either end and inside", () => {
    for (const t of [" Use Node 22", "Use Node 22 ", "Use  Node 22", "  ", " ", "", "USE node"]) {
      expect(normalizeClaim(t)).toBe(definition(t));
    }
    expect(normalizeClaim(" Use  Node 22 ")).toBe("use node 22");
  });
});
