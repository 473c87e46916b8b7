/**
 * The retrieval benchmark reads both hit shapes of `worker recall --json` (the bare array of
 * engram hits with `snippet`, and `{hits, tokens}` with `text`, `rationale` and `commit`) and
 * ranks evidence the same way in each.
 */
import { describe, expect, it } from "vitest";
import {
  commitNeedle,
  firstEvidenceRank,
  judge,
  metricsOf,
  noteNeedle,
  readRecall,
  tokensReturned,
} from "../../bench/retrieval-score.js";

const NOTE =
  "Every networked transport falls back to the local spool when it cannot be reached, so exit 0 always means durable somewhere.";

describe("reading a recall", () => {
  it("finds a note in an engram hit's snippet, prefixed and cut short", () => {
    const read = readRecall([
      { engram_id: "e_1", snippet: "Lesson: something else" },
      { engram_id: "e_2", snippet: `Convention: ${NOTE.slice(0, 90)}…` },
    ]);
    expect(firstEvidenceRank(read.hits, { needles: [noteNeedle(NOTE)] })).toBe(2);
    expect(tokensReturned(read)).toBeGreaterThan(10);
  });

  it("finds a commit by its sha or its subject, and takes the output's own token count", () => {
    const sha = "a".repeat(40);
    const read = readRecall({
      hits: [
        { id: "x", text: "Unrelated", tokens: 3 },
        { id: "y", text: "Drop EOL node 20", rationale: "EOL", commit: sha, tokens: 9 },
      ],
      tokens: 12,
    });
    expect(firstEvidenceRank(read.hits, { needles: [], commits: new Set([sha]) })).toBe(2);
    const short = readRecall({ hits: [{ text: "x", commit: "aaaaaaa" }] });
    expect(firstEvidenceRank(short.hits, { needles: [], commits: new Set([sha]) })).toBe(1);
    const needle = commitNeedle("feat!: moves to code-suggester for PR management (#57)\n\nbody");
    expect(needle).toBe("moves to code suggester for pr management");
    expect(commitNeedle("Merge pull request #9 from a/b\n\nUse external pathval module")).toBe(
      "use external pathval module",
    );
    expect(tokensReturned(read)).toBe(12);
  });

  it("ranks only the top 5 and says 0 when no evidence is there", () => {
    const hits = Array.from({ length: 7 }, (_, i) => ({ text: `hit ${i}` }));
    expect(firstEvidenceRank(hits, { needles: ["hit 6"] })).toBe(0);
    expect(firstEvidenceRank(hits, { needles: ["zzz"] })).toBe(0);
  });
});

describe("the figures", () => {
  it("give R@1, R@5, MRR and judge against the targets", () => {
    const m = metricsOf([
      { rank: 1, tokens: 100 },
      { rank: 3, tokens: 200 },
      { rank: 0, tokens: 600 },
      { rank: 2, tokens: 100 },
    ]);
    expect(m).toMatchObject({ n: 4, r_at_1: 0.25, r_at_5: 0.75, tokens_max: 600 });
    expect(m.mrr).toBeCloseTo((1 + 1 / 3 + 0.5) / 4, 3);
    const base = metricsOf([
      { rank: 1, tokens: 1 },
      { rank: 0, tokens: 1 },
    ]);
    const j = judge(m, [base]);
    expect(j.ratio_to_best_baseline).toBe(1.5);
    expect(j).toMatchObject({
      r_at_5_pass: true,
      ratio_pass: true,
      tokens_pass: false,
      pass: false,
    });
  });
});
