/**
 * The learned decision scorer of the seventh round (test/fixtures/history-corpus/README.md):
 * measured, not wired into the import. Its features and probability are deterministic, a
 * feature's weight moves the score its own way, training reads no held-out history, and the
 * weights kept in the fixture are what training on the tuned histories gives again.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  commitFeatures,
  decisionProbability,
  FEATURE_NAMES,
  type ScoredCommit,
  scoredCommit,
} from "../../scripts/history-features.js";
import { fitLogistic, TUNED_HISTORIES, tunedRows } from "../../scripts/history-training.js";
import { readMessage } from "../../src/core/history/git-events.js";
import { ROOT } from "../support/bins.js";
import { CORPUS_HISTORIES, loadCorpus } from "../support/history-corpus.js";

const LINE = 0.6;
const REPORT = join(ROOT, "test", "fixtures", "history-corpus", "learned-scorer.txt");

function scored(message: string, paths: [string, string][], parents = 1): ScoredCommit {
  const changes = { paths: paths.map(([status, path]) => ({ status, path })) };
  const read = readMessage({ message, parents, author: "Someone <someone@example.com>", changes });
  const out = scoredCommit(read.text, read.cls);
  if (out === undefined) throw new Error(`${message} is noise`);
  return out;
}

/** The weights the fixture keeps, in `FEATURE_NAMES`'s order, and the L2 strength chosen. */
function keptWeights(): { weights: number[]; lambda: number } {
  const text = readFileSync(REPORT, "utf8");
  const lambda = Number(
    /^Weights trained on every tuned history \(\w+, L2 ([\d.]+),/m.exec(text)?.[1],
  );
  const byName = new Map(
    text
      .split("\n")
      .map((line) => /^(\S+) (-?\d+\.\d{4})$/.exec(line))
      .flatMap((m) => (m ? [[m[1] as string, Number(m[2])] as const] : [])),
  );
  return { weights: FEATURE_NAMES.map((n) => byName.get(n) ?? Number.NaN), lambda };
}

const one = (name: string) => FEATURE_NAMES.map((n) => (n === name ? 1 : 0));
const scaled = (w: number[], by: number) => w.map((v) => v * by);

describe("the learned decision scorer", () => {
  const dropNode = () =>
    scored("Drop support for Node.js 14\n\nIt is past its end of life.", [
      ["M", "package.json"],
      ["M", ".github/workflows/ci.yml"],
    ]);
  const typo = () => scored("Fix a typo in the README", [["M", "README.md"]]);

  it("gives the same features and score for the same commit", () => {
    const { weights } = keptWeights();
    expect(commitFeatures(dropNode(), LINE)).toEqual(commitFeatures(dropNode(), LINE));
    expect(commitFeatures(dropNode(), LINE)).toHaveLength(FEATURE_NAMES.length);
    expect(decisionProbability(dropNode(), weights, LINE)).toBe(
      decisionProbability(dropNode(), weights, LINE),
    );
  });

  it("moves the score the way a feature's weight points", () => {
    const ci = scored("Run the checks on every push", [["M", ".github/workflows/ci.yml"]]);
    const code = scored("Run the checks on every push", [["M", "src/check.ts"]]);
    for (const sign of [1, -1]) {
      const w = scaled(one("kind:ci"), 2 * sign);
      const diff = decisionProbability(ci, w, LINE) - decisionProbability(code, w, LINE);
      expect(Math.sign(diff)).toBe(sign);
    }
  });

  it("with the weights learned, scores a runtime dropped above a typo fixed", () => {
    const { weights } = keptWeights();
    expect(decisionProbability(dropNode(), weights, LINE)).toBeGreaterThan(0.5);
    expect(decisionProbability(typo(), weights, LINE)).toBeLessThan(0.1);
  });

  it("reads a merge by its pull request's title, and scores no release", () => {
    const merge = scored(
      "Merge pull request #12 from someone/esm\n\nSwitch the package to ESM",
      [["M", "package.json"]],
      2,
    );
    expect(merge.merge).toBe(true);
    expect(merge.description).toBe("Switch the package to ESM");
    const release = readMessage({ message: "v1.2.3", parents: 1 });
    expect(scoredCommit(release.text, release.cls)).toBeUndefined();
  });

  it("trains on the tuned histories only: no held-out history is in its list", () => {
    // By name: the held-out histories' files are not opened here either.
    const heldOutWhole = ["yargs", "uptime-kuma", "gotify", "excalidraw"];
    const tuned = CORPUS_HISTORIES.filter((name) => !heldOutWhole.includes(name));
    expect([...TUNED_HISTORIES]).toEqual(tuned);
    const rows = tunedRows();
    const commander = loadCorpus("commander").commits;
    const heldOut = new Set(commander.filter((c) => c.held_out === true).map((c) => c.sha));
    expect(heldOut.size).toBeGreaterThan(100);
    expect(rows.some((r) => r.history === "commander" && heldOut.has(r.sha))).toBe(false);
  });

  it("keeps the weights training on every tuned history gives", () => {
    const { weights, lambda } = keptWeights();
    expect(weights.every(Number.isFinite)).toBe(true);
    const trained = fitLogistic(tunedRows(), lambda);
    expect(trained.map((w) => w.toFixed(4))).toEqual(weights.map((w) => w.toFixed(4)));
  });
});
