/**
 * The scan compiles a rule at its first run, not when its set is built: a process that
 * redacts a few notes (every `worker emit`) pays for the rules their keywords name only.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/core/ingest/redact.js";
import {
  buildRuleSet,
  findSpans,
  mergeSpans,
  type Span,
} from "../../src/core/ingest/redact-scan.js";
import type { SecretRule } from "../../src/core/ingest/rules/types.js";

/** A rule whose pattern does not compile: it throws exactly when it is compiled. */
const BROKEN: SecretRule = { id: "broken", keywords: ["zqx"], pattern: "zqx(" };
const TOKEN: SecretRule = { id: "token", keywords: ["tok_"], pattern: "tok_[a-z]{8}" };

describe("rule sets compile their rules lazily", () => {
  it("builds a set holding a rule that does not compile, and runs the others", () => {
    const set = buildRuleSet([BROKEN, TOKEN]);
    expect(findSpans("plain prose, and tok_abcdefgh", set)).toEqual([
      { start: 17, end: 29, rank: 1 },
    ]);
    expect(set.tokens).toEqual(["[REDACTED:broken]", "[REDACTED:token]"]);
  });

  it("compiles a rule when a text holds its keyword", () => {
    const set = buildRuleSet([BROKEN, TOKEN]);
    expect(() => findSpans("here is zqx", set)).toThrow(SyntaxError);
  });
});

/**
 * Keywords of two to six characters that share their first two, three and four characters
 * (the scan's tables go by them), with punctuation, each a rule whose pattern is the keyword.
 */
const KEYWORDS = [
  "s.",
  "sk-",
  "sk_l",
  "secret",
  "sec",
  "q~",
  "key",
  "key-",
  "tok_",
  "toke",
  "pat.",
  "a3t",
];
const LITERAL_RULES: SecretRule[] = KEYWORDS.map((word, i) => ({
  id: `k${i}`,
  keywords: [word],
  pattern: word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
  flags: "i",
}));

/**
 * The spans of the rules above as if each ran over the whole text: its keyword's places, left
 * to right and not overlapping (ASCII letters in either case, as the scan compares them),
 * merged as `findSpans` merges them.
 */
function spansOfEveryPlace(text: string): Span[] {
  const lower = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const spans: Span[] = [];
  for (const [rank, word] of KEYWORDS.entries()) {
    for (let at = lower.indexOf(word); at !== -1; at = lower.indexOf(word, at + word.length)) {
      spans.push({ start: at, end: at + word.length, rank });
    }
  }
  return mergeSpans(spans);
}

describe("the keyword scan", () => {
  it("runs each rule from its keyword's first place, in either case, beside any character", () => {
    const set = buildRuleSet(LITERAL_RULES);
    const piece = fc.constantFrom(
      ...KEYWORDS,
      ...KEYWORDS.map((word) => word.toUpperCase()),
      ..."SKEYQTOP~.-_ \nxé\u212a\u0130\u0153\u0173",
      "😀",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const text = pieces.join("");
        expect(findSpans(text, set)).toEqual(spansOfEveryPlace(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("finds an old-form Vault token after sentences that end in `s.`", () => {
    const token = "s.Zq8Xw2Lm9Rt4Kp7Vb3Nc6Hd1";
    const text = `The tests pass. Both runs. Then ${token} leaked, and jobs.ts logged S.${token.slice(2)}.`;
    expect(createRedactor().redact(text).text).toBe(
      "The tests pass. Both runs. Then [REDACTED:vault-service-token] leaked, and jobs.ts logged S.Zq8Xw2Lm9Rt4Kp7Vb3Nc6Hd1.",
    );
  });
});
