/**
 * Scenario `from_git`: a bootstrap from a long history. 10,000 generated commits (free-form
 * and conventional subjects, merges, bumps, releases, reverts, decisions; one `git
 * fast-import`, not timed) become memory through `director ingest --from-git main` and one
 * `director run` (history is compacted whole), each the real command line in its own process.
 * Then the labelled real histories (test/fixtures/history-corpus): recall and precision at the
 * import's confidence line (and over every candidate), the share of decisions with a
 * rationale per history, the held-out histories apart, and the share MEMORY.md shows after the
 * same two commands on each history written as a real repository (not timed). Where a second
 * labeller labelled a held-out history blind, how the two labellings agree and the classifier's
 * figures on the commits both agree on.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { DECISION_LINE } from "../src/core/history/confidence.js";
import { clean } from "../src/core/rendering/focus-text.js";
import {
  type HistoryAgreement,
  historyAgreement,
  type LabellerAgreement,
  pooledAgreement,
  SECOND_LABELLED,
} from "../test/support/history-agreement.js";
import {
  CORPUS_HISTORIES,
  importedDecisions,
  loadCorpus,
  scoreCorpus,
  writeCorpusRepo,
} from "../test/support/history-corpus.js";
import { writeHistoryFixture } from "../test/support/history-fixture.js";
import { initBenchRepo, ROOMY_BUDGETS } from "./repo-fixtures.js";
import { DIRECTOR_CLI, log, removeDir, round, runNode, tempDir } from "./util.js";

// Issue 41 asks an import of 10,000 commits under 5 s; the seed asked under 10 s for both steps.
export const FROM_GIT_TARGET_SECONDS = 5;

export interface FromGitScenarioResult {
  commits: number;
  labelled_decisions: number;
  ingest_seconds: number;
  run_seconds: number;
  seconds: number;
  events: number;
  compacted_events: number;
  engrams_written: number;
  decisions_in_engrams: number;
  memory_md: { bytes: number; items: number } | null;
  /** Real histories labelled by hand (test/fixtures/history-corpus): the classifier's scores. */
  real_histories: RealHistoryScore[];
  /** The tuned and the held-out parts pooled (every labelled commit of each counted once). */
  real_histories_pooled: {
    tuned: PooledScore;
    held_out: PooledScore;
    line: number;
    /** The held-out parts a second labeller labelled, pooled. */
    second_labels: SecondLabelScore;
  };
  setup_seconds: number;
  how: string;
  target: string;
  pass: boolean;
}

export interface PooledScore {
  commits: number;
  labelled_decisions: number;
  recall: number;
  precision: number;
}

export interface RealHistoryScore {
  history: string;
  part: "tuned" | "held out";
  /** Never looked at while the rules changed: reported apart (README of the corpus). */
  held_out: boolean;
  kind: string;
  commits: number;
  labelled_decisions: number;
  /** At the import's confidence line (`DECISION_LINE`): what it remembers as decisions. */
  recall: number;
  precision: number;
  /** Every candidate, whatever its confidence (those below the line are proposed). */
  candidates: { recall: number; precision: number };
  /** Of the labelled decisions found, the share whose decision carries a rationale. */
  with_rationale: number;
  /**
   * Of the labelled decisions found in the whole history (both parts), the share MEMORY.md
   * shows after `ingest --from-git main` and one `director run` (on the history's first row).
   */
  in_memory_md?: number;
  /** A held-out part a second labeller labelled blind (the corpus README): figures only. */
  agreement?: SecondLabelScore["agreement"];
  against_second?: SecondLabelScore["against_second"];
  on_agreed?: SecondLabelScore["on_agreed"];
  against_settled?: SecondLabelScore["against_settled"];
  settling?: SecondLabelScore["settling"];
}

/** A second labelling of held-out commits, and the classifier at the line against it. */
export interface SecondLabelScore {
  /** The second labeller against the first (the first taken as truth), and Cohen's kappa. */
  agreement: {
    kappa: number;
    recall: number;
    precision: number;
    first_decisions: number;
    second_decisions: number;
    both: number;
  };
  /** The classifier against the second labels. */
  against_second: { recall: number; precision: number };
  /** The classifier on the commits both labellers agree on (the others left out). */
  on_agreed: PooledScore;
  /** The classifier against the settled labels (a third labeller's where the two disagree). */
  against_settled: PooledScore;
  /** Each labeller against the settled labels. */
  settling: {
    first: { recall: number; precision: number };
    second: { recall: number; precision: number };
  };
}

function secondLabelScore(
  a: LabellerAgreement,
  c: HistoryAgreement["classifier"],
  settling: HistoryAgreement["settling"],
): SecondLabelScore {
  const pair = (l: LabellerAgreement) => ({
    recall: round(l.recall),
    precision: round(l.precision),
  });
  return {
    agreement: {
      kappa: round(a.kappa),
      recall: round(a.recall),
      precision: round(a.precision),
      first_decisions: a.first,
      second_decisions: a.second,
      both: a.both,
    },
    against_second: { recall: round(c.second.recall), precision: round(c.second.precision) },
    on_agreed: {
      commits: c.agreed.commits,
      labelled_decisions: c.agreed.labelled,
      recall: round(c.agreed.recall),
      precision: round(c.agreed.precision),
    },
    against_settled: {
      commits: c.settled.commits,
      labelled_decisions: c.settled.labelled,
      recall: round(c.settled.recall),
      precision: round(c.settled.precision),
    },
    settling: { first: pair(settling.first), second: pair(settling.second) },
  };
}

/** The labelled history as a real repository, imported by the CLI: the share of MEMORY.md. */
async function memoryMdShare(history: string): Promise<number> {
  const work = tempDir(`from-git-${history}`);
  try {
    const repo = join(work, "repo");
    execFileSync("git", ["init", "-q", "-b", "main", repo]);
    const corpus = loadCorpus(history);
    writeCorpusRepo(repo, corpus);
    await initBenchRepo(repo, ROOMY_BUDGETS);
    const env = { ...process.env, SOURCE_DATE_EPOCH: "1795000000" };
    for (const args of [["ingest", "--from-git", "main"], ["run"]]) {
      const r = await runNode([DIRECTOR_CLI, ...args, "--repo", repo, "--json"], { env });
      if (r.code !== 0) throw new Error(`director ${args[0]} failed: ${r.stderr}`);
    }
    const md = readFileSync(join(repo, "MEMORY.md"), "utf8").toLowerCase();
    const decisions = md.slice(md.indexOf("## decisions"));
    const imported = importedDecisions(corpus);
    const found = corpus.commits.flatMap((c) => {
      const d = c.decision ? imported.get(c.sha) : undefined;
      // A decision below the line is proposed, not remembered among the decisions.
      return d && (d.confidence ?? 1) >= DECISION_LINE
        ? [clean(d.title).slice(0, 48).toLowerCase()]
        : [];
    });
    const unique = [...new Set(found)];
    const shown = unique.filter((n) => decisions.includes(n)).length;
    return unique.length === 0 ? 1 : shown / unique.length;
  } finally {
    removeDir(work);
  }
}

/**
 * Recall and precision of decisions on each labelled real history (and its held-out part), at
 * the import's confidence line and over every candidate; then the tuned and held-out parts
 * pooled.
 */
export async function realHistoryScores(): Promise<{
  histories: RealHistoryScore[];
  pooled: FromGitScenarioResult["real_histories_pooled"];
}> {
  const out: RealHistoryScore[] = [];
  const pool = { tuned: emptyPool(), held_out: emptyPool() };
  const agreements: HistoryAgreement[] = [];
  for (const history of CORPUS_HISTORIES) {
    const share = round(await memoryMdShare(history));
    const corpus = loadCorpus(history);
    for (const heldOut of [false, true]) {
      const score = scoreCorpus(corpus, { heldOut, line: DECISION_LINE });
      if (score.commits === 0) continue;
      const all = scoreCorpus(corpus, { heldOut });
      const p = heldOut ? pool.held_out : pool.tuned;
      p.commits += score.commits;
      p.labelled += score.labelled;
      p.found += score.found;
      p.called += score.called;
      const secondLabelled = heldOut && (SECOND_LABELLED as readonly string[]).includes(history);
      const agreed = secondLabelled ? historyAgreement(history, DECISION_LINE) : undefined;
      if (agreed) agreements.push(agreed);
      out.push({
        history,
        part: heldOut ? "held out" : "tuned",
        held_out: heldOut,
        kind: corpus.kind ?? "",
        commits: score.commits,
        labelled_decisions: score.labelled,
        recall: round(score.recall),
        precision: round(score.precision),
        candidates: { recall: round(all.recall), precision: round(all.precision) },
        with_rationale: round(score.found === 0 ? 1 : score.with_rationale / score.found),
        ...(out.some((r) => r.history === history) ? {} : { in_memory_md: share }),
        ...(agreed ? secondLabelScore(agreed.agreement, agreed.classifier, agreed.settling) : {}),
      });
    }
  }
  const secondPooled = pooledAgreement(agreements);
  return {
    // Held-out parts reported apart, after the tuned ones.
    histories: [...out.filter((r) => !r.held_out), ...out.filter((r) => r.held_out)],
    pooled: {
      tuned: pooled(pool.tuned),
      held_out: pooled(pool.held_out),
      line: DECISION_LINE,
      second_labels: secondLabelScore(
        secondPooled.agreement,
        secondPooled.classifier,
        secondPooled.settling,
      ),
    },
  };
}

function emptyPool() {
  return { commits: 0, labelled: 0, found: 0, called: 0 };
}

function pooled(p: ReturnType<typeof emptyPool>): PooledScore {
  return {
    commits: p.commits,
    labelled_decisions: p.labelled,
    recall: round(p.labelled === 0 ? 1 : p.found / p.labelled),
    precision: round(p.called === 0 ? 1 : p.found / p.called),
  };
}

/** Commits written for `n` specs: one topic commit and one merge every 10th. */
function specsFor(commits: number): number {
  let n = Math.floor(commits / 1.2);
  while (n + 2 * Math.floor((n - 1) / 10) < commits) n++;
  return n;
}

export async function runFromGitScenario(commits = 10_000): Promise<FromGitScenarioResult> {
  const work = tempDir("from-git");
  try {
    const t0 = performance.now();
    const repo = join(work, "repo");
    execFileSync("git", ["init", "-q", "-b", "main", repo]);
    // Ten years of history, whatever the count.
    const fixture = writeHistoryFixture(
      repo,
      specsFor(commits),
      Math.floor((3650 * 86400) / commits),
    );
    await initBenchRepo(repo, ROOMY_BUDGETS);
    const setup = (performance.now() - t0) / 1000;
    log(`from_git: ${fixture.commits} commits generated (set-up ${round(setup)} s)`);

    const env = { ...process.env, SOURCE_DATE_EPOCH: "1795000000" };
    const t1 = performance.now();
    const ingest = await runNode(
      [DIRECTOR_CLI, "ingest", "--from-git", "main", "--repo", repo, "--json"],
      { env },
    );
    const t2 = performance.now();
    const run = await runNode([DIRECTOR_CLI, "run", "--repo", repo, "--json"], { env });
    const t3 = performance.now();
    if (ingest.code !== 0 || run.code !== 0) {
      throw new Error(`director failed: ${ingest.stderr}${run.stderr}`);
    }
    const ingested = JSON.parse(ingest.stdout) as { events: number; commits: number };
    const ran = JSON.parse(run.stdout) as {
      compacted_events: number;
      engrams_written: number;
      written: string[];
      focus: { bytes: number; items: number } | null;
    };
    const decisions = ran.written.reduce((n, path) => {
      const engram = JSON.parse(readFileSync(join(repo, path), "utf8")) as {
        scope: string;
        decisions: unknown[];
      };
      return engram.scope === "st" ? n + engram.decisions.length : n;
    }, 0);
    const seconds = (t3 - t1) / 1000;
    log(
      `from_git: ingest ${round((t2 - t1) / 1000)} s, run ${round((t3 - t2) / 1000)} s; ` +
        `${ran.compacted_events} events -> ${ran.engrams_written} engrams, ${decisions} decisions`,
    );
    const real = await realHistoryScores();
    return {
      commits: ingested.commits,
      labelled_decisions: fixture.decisions.length,
      ingest_seconds: round((t2 - t1) / 1000),
      run_seconds: round((t3 - t2) / 1000),
      seconds: round(seconds),
      events: ingested.events,
      compacted_events: ran.compacted_events,
      engrams_written: ran.engrams_written,
      decisions_in_engrams: decisions,
      memory_md: ran.focus ? { bytes: ran.focus.bytes, items: ran.focus.items } : null,
      real_histories: real.histories,
      real_histories_pooled: real.pooled,
      setup_seconds: round(setup),
      how:
        "history written by one git fast-import (not timed); timed: node dist/bin/director.cjs ingest --from-git main, " +
        "then director run (not forced: history is compacted whole), each a process of its own, start-up included",
      target: `< ${FROM_GIT_TARGET_SECONDS} s for ingest --from-git and the run together`,
      pass: seconds < FROM_GIT_TARGET_SECONDS && ran.compacted_events === ingested.events,
    };
  } finally {
    removeDir(work);
  }
}
