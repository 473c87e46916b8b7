/**
 * The token counts remembered with the context index are the tokenizer's: a text counted
 * from the memo's pieces is what gpt-tokenizer counts for the whole text, for learnings of
 * any shape (unicode, code, runs of spaces, blank lines, trailing whitespace), and an answer
 * counted so is byte for byte the answer counted by the tokenizer.
 */
import fc from "fast-check";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import { answerTexts, contextFromIndex } from "../../src/core/graph/context.js";
import { buildContextIndex, ContextIndexReader } from "../../src/core/graph/context-index.js";
import {
  buildTokenMemo,
  memoCounter,
  type TokenMemo,
} from "../../src/core/graph/context-tokens.js";
import type { LinkedLearning } from "../../src/core/graph/entities.js";
import { type LearningType, learningId } from "../../src/core/graph/learnings.js";
import {
  countTokens,
  SPLIT_PATTERN,
  singleTokenWords,
  splitTokens,
} from "../../src/graph/tokens.js";

const FRAGMENTS = [
  "planner",
  "Cache",
  "retry",
  "don't",
  "we'LL",
  "12345",
  "3.14",
  "ünïcode",
  "naïve café",
  "漢字かな",
  "🎉🚀",
  "e\u0301",
  "fn(x) => x + 1;",
  "if (a && b) { return [a, b]; }",
  "src/billing/retry.ts:42",
  "`npm run build`",
  "https://example.com/a?b=c",
  "--flag=value",
  "...",
  "—",
  "<|x",
  " ",
  "  ",
  "\t",
  "\n",
  "\n\n",
  "  \n",
  "\r\n",
  " \n \n",
];

const fragmentText = fc
  .tuple(
    fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 10 }),
    fc.constantFrom("", " "),
  )
  .map(([parts, glue]) => parts.join(glue));

const TYPES: LearningType[] = ["decision", "insight", "pattern", "convention", "self_knowledge"];
const ENTITIES = [
  "file:src/a.ts",
  "file:src/billing/retry.ts",
  "person:ada",
  "person:zoë",
  "project:engine",
  "issue:12",
  "commit:1a2b3c4d5e6f",
  "url:https://example.com/a",
];

const learningArb = fc
  .record({
    text: fragmentText,
    n: fc.nat(),
    type: fc.constantFrom(...TYPES),
    rationale: fc.option(fragmentText, { nil: null }),
    entities: fc.uniqueArray(fc.constantFrom(...ENTITIES), { minLength: 1, maxLength: 4 }),
    evidence: fc.integer({ min: 1, max: 4 }),
  })
  .map(
    (r): LinkedLearning => ({
      id: learningId(`${r.text} ${r.n}`),
      type: r.type,
      text: `${r.text} ${r.n}`,
      rationale: r.rationale,
      engrams: [`e_${r.n}`],
      scope: "st",
      evidence: r.evidence,
      written_at: "2026-01-01T00:00:00Z",
      topics: [],
      links: [],
      senders: [],
      entities: [...r.entities].sort(),
      unlinked: [],
    }),
  );

const SCOPE = "engram memory of /tmp/repo ü, version 3, tiers lt+st, local only";

function memoOf(learnings: LinkedLearning[]): { reader: ContextIndexReader; memo: TokenMemo } {
  const reader = new ContextIndexReader(buildContextIndex(learnings));
  return { reader, memo: buildTokenMemo(answerTexts(reader, SCOPE), splitTokens, countTokens) };
}

describe("token counts remembered with the context index", () => {
  it("split texts with the tokenizer's own pattern", () => {
    expect(new RegExp(SPLIT_PATTERN, "gu").source).toBe(CL100K_TOKEN_SPLIT_REGEX.source);
    expect(CL100K_TOKEN_SPLIT_REGEX.flags).toBe("gu");
  });

  it("count every text an answer is made of as the tokenizer does, and every answer too", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(learningArb, { minLength: 1, maxLength: 25, selector: (l) => l.id }),
        fc.array(fc.constantFrom("planner", "retry", "Cache", "ada", "ünïcode", "src/a.ts"), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
        fc.integer({ min: 1, max: 600 }),
        (learnings, words, type, maxTokens) => {
          const { reader, memo } = memoOf(learnings);
          let live = 0;
          const counted = memoCounter(memo, splitTokens, (t) => {
            live++;
            return countTokens(t);
          });
          // Every text of the index's answers is counted from the memo alone, exactly...
          let special = 0;
          for (const text of answerTexts(reader, SCOPE)) {
            expect(counted(text), JSON.stringify(text)).toBe(encode(text).length);
            if (text.includes("<|")) special++;
          }
          // ...but for a text holding a special token's opening, which the tokenizer judges.
          expect(live).toBe(special);
          const topic = words.join(" ");
          const options = { topic, type, maxTokens, scopeLine: SCOPE };
          const fromMemo = contextFromIndex(reader, { ...options, countTokens: counted });
          const fromTokenizer = contextFromIndex(reader, { ...options, countTokens });
          expect(fromMemo).toEqual(fromTokenizer);
          expect(encode(fromMemo.markdown).length).toBe(fromMemo.tokens);
          expect(fromMemo.tokens).toBeLessThanOrEqual(maxTokens);
          expect(counted(fromMemo.markdown)).toBe(fromMemo.tokens);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("holds the tokenizer's count of every piece: a drifted count is caught", () => {
    const learnings = fc.sample(learningArb, { numRuns: 40, seed: 7 });
    const { memo } = memoOf(learnings);
    expect(memo.chunks.length).toBeGreaterThan(20);
    memo.chunks.forEach((piece, k) => {
      expect(memo.counts[k], JSON.stringify(piece)).toBe(encode(piece).length);
    });
    // The check above can fail: one count off by one changes what the memo counts.
    const k = memo.counts.findIndex((_, i) => /\p{L}{4}/u.test(memo.chunks[i] as string));
    const drifted = { ...memo, counts: memo.counts.map((c, i) => (i === k ? c + 1 : c)) };
    const text = `- **insight**: ${memo.chunks[k]}\n`;
    const real = encode(text).length;
    expect(memoCounter(memo, splitTokens, countTokens)(text)).toBe(real);
    expect(memoCounter(drifted, splitTokens, countTokens)(text)).not.toBe(real);
  });

  it("asks the tokenizer for a piece it never saw or a special token's opening", () => {
    const { memo } = memoOf(fc.sample(learningArb, { numRuns: 10, seed: 3 }));
    const asked: string[] = [];
    const counted = memoCounter(memo, splitTokens, (t) => {
      asked.push(t);
      return countTokens(t);
    });
    const unseen = "## Memory: quixotic zeppelin\n";
    expect(counted(unseen)).toBe(encode(unseen).length);
    expect(counted("a <|endoftext")).toBe(encode("a <|endoftext").length);
    expect(asked).toEqual([unseen, "a <|endoftext"]);
  });

  it("counts a topic word memory never held from the tokenizer's one-token words", () => {
    const words = singleTokenWords();
    expect(words.length).toBeGreaterThan(10_000);
    for (const w of words.filter((_, k) => k % 97 === 0)) expect(encode(w).length).toBe(1);
    const { memo } = memoOf(fc.sample(learningArb, { numRuns: 10, seed: 3 }));
    const known = new Set(words);
    const asked: string[] = [];
    const counted = memoCounter(
      memo,
      splitTokens,
      (t) => {
        asked.push(t);
        return countTokens(t);
      },
      (piece) => known.has(piece),
    );
    const header = "## Memory: why quantum\n";
    expect(counted(header)).toBe(encode(header).length);
    expect(asked).toEqual([]);
  });
});
