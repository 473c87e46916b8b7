/**
 * Scenario `retrieval` (issue 35, "Memory that answers"): labelled questions over real text
 * (test/fixtures/retrieval), asked of engram through the real `worker recall` and of a BM25
 * baseline in the same run; R@1, R@5, MRR and the tokens of the top 5, per set and per split.
 *
 *   notes    615 notes from docs/ as `memory_note.v1` envelopes: ingest FILE, run --flush
 *   history  the four labelled histories as real repositories: ingest --from-git, run --flush
 *
 * `node dist/bench/retrieval.js [--set notes|history] [--split tuning|held_out] [--details]`
 * runs it alone (`npm run bench:retrieval`); its JSON goes to stdout.
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createRedactor } from "../src/core/ingest/redact.js";
import { loadCorpus } from "../test/support/history-corpus.js";
import { type Baseline, type BaselineDoc, bm25Baseline } from "./retrieval-bm25.js";
import {
  askEngram,
  type BuildReport,
  buildHistoryRepo,
  buildNotesRepo,
  inPool,
  recallTakesMaxTokens,
} from "./retrieval-repos.js";
import {
  commitNeedle,
  type EvidenceMatcher,
  firstEvidenceRank,
  type Judged,
  judge,
  type Metrics,
  metricsOf,
  noteNeedle,
  type Outcome,
  readRecall,
  TARGETS,
  tokensReturned,
} from "./retrieval-score.js";
import {
  type BenchQuestion,
  HISTORIES,
  type HistoryName,
  loadHistorySet,
  loadNotesSet,
  type SetName,
  type Split,
  setProblems,
} from "./retrieval-sets.js";
import { log, removeDir, round, tempDir } from "./util.js";

export interface RetrievalOptions {
  /** Which set to ask (default both). */
  set?: SetName | "all";
  /** Ask only this split's questions (default both; each is reported apart either way). */
  split?: Split | "all";
  /** Add each question's ranks and tokens to the result. */
  details?: boolean;
  /** `worker recall` processes at once (default: twice the machine's cores, at least 4). */
  concurrency?: number;
}

export interface SystemFigures {
  engram: Metrics;
  bm25: Metrics;
}

export interface SplitFigures extends SystemFigures, Judged {}

export interface QuestionDetail {
  id: string;
  split: Split;
  question: string;
  engram_rank: number;
  engram_tokens: number;
  bm25_rank: number;
  bm25_tokens: number;
  /** What engram returned, for reading: the start of each hit's text. */
  engram_hits: string[];
}

export interface SetFigures {
  questions: number;
  /** Notes (notes set) or commits (history set) the memory was built from. */
  documents: number;
  build: BuildReport[];
  tuning?: SplitFigures;
  held_out?: SplitFigures;
  all: SplitFigures;
  details?: QuestionDetail[];
}

export interface RetrievalScenarioResult {
  notes?: SetFigures;
  history?: SetFigures;
  /** Whether `worker recall` took `--max-tokens 512` (the note-level recall adds it). */
  max_tokens_flag: boolean;
  seconds: number;
  /** The figures in one line, as the run logs them. */
  summary: string;
  how: string;
  target: string;
  pass: boolean;
}

/** One question as asked of one memory: how to ask engram and the baseline, how to judge. */
interface Asked {
  question: BenchQuestion;
  matcher: EvidenceMatcher;
  repo: string;
  baseline: Baseline;
  /** The baseline's document ids that are evidence. */
  evidenceDocs: ReadonlySet<string>;
}

/** Ingest redacts what looks like a secret (a few notes quote examples): match what it kept. */
const redactor = createRedactor();
const asKept = (text: string) => redactor.redact(text).text;

const splitsOf = (split: RetrievalOptions["split"]): Split[] =>
  split === undefined || split === "all" ? ["tuning", "held_out"] : [split];

async function askAll(asked: readonly Asked[], concurrency: number): Promise<QuestionDetail[]> {
  return inPool(asked, concurrency, async (a) => {
    const read = readRecall(await askEngram(a.repo, a.question.question, TARGETS.max_tokens));
    const base = a.baseline.ask(a.question.question);
    const baseRank = base.ids.findIndex((id) => a.evidenceDocs.has(id)) + 1;
    return {
      id: a.question.id,
      split: a.question.split,
      question: a.question.question,
      engram_rank: firstEvidenceRank(read.hits, a.matcher),
      engram_tokens: tokensReturned(read),
      bm25_rank: baseRank,
      bm25_tokens: base.tokens,
      engram_hits: read.hits.map(
        (h) => `${h.commit ? `${h.commit.slice(0, 12)} ` : ""}${h.text.slice(0, 100)}`,
      ),
    };
  });
}

function figuresOf(details: readonly QuestionDetail[]): SplitFigures {
  const engram: Outcome[] = details.map((d) => ({ rank: d.engram_rank, tokens: d.engram_tokens }));
  const bm25: Outcome[] = details.map((d) => ({ rank: d.bm25_rank, tokens: d.bm25_tokens }));
  const figures = { engram: metricsOf(engram), bm25: metricsOf(bm25) };
  return { ...figures, ...judge(figures.engram, [figures.bm25]) };
}

function setFigures(
  details: readonly QuestionDetail[],
  documents: number,
  build: BuildReport[],
  options: RetrievalOptions,
): SetFigures {
  const out: SetFigures = { questions: details.length, documents, build, all: figuresOf(details) };
  for (const split of splitsOf(options.split)) {
    out[split] = figuresOf(details.filter((d) => d.split === split));
  }
  if (options.details) out.details = [...details];
  return out;
}

/** A set's questions ready to ask, once its memory is built. */
interface Prepared {
  asked: Asked[];
  documents: number;
  build: BuildReport[];
}

async function prepareNotes(work: string, options: RetrievalOptions): Promise<Prepared> {
  const set = loadNotesSet();
  const repo = join(work, "notes", "repo");
  const t0 = performance.now();
  const build = await buildNotesRepo(repo, set.notes);
  log(`retrieval: notes repository built in ${round((performance.now() - t0) / 1000)} s`);
  const byId = new Map(set.notes.map((n) => [n.id, n]));
  const docs: BaselineDoc[] = set.notes.map((n) => ({
    id: n.id,
    text: n.rationale === undefined ? n.text : `${n.text} ${n.rationale}`,
  }));
  const baseline = bm25Baseline(docs);
  const splits = splitsOf(options.split);
  const asked = set.questions
    .filter((q) => splits.includes(q.split))
    .map((q) => ({
      question: q,
      matcher: { needles: q.evidence.map((id) => noteNeedle(asKept(byId.get(id)?.text ?? ""))) },
      repo,
      baseline,
      evidenceDocs: new Set(q.evidence),
    }));
  return { asked, documents: set.notes.length, build: [build] };
}

async function prepareHistory(work: string, name: HistoryName, questions: BenchQuestion[]) {
  const t0 = performance.now();
  const repo = join(work, name, "repo");
  const { report, shas } = await buildHistoryRepo(repo, name);
  log(`retrieval: history ${name} built in ${round((performance.now() - t0) / 1000)} s`);
  const commits = loadCorpus(name).commits;
  const messages = new Map(commits.map((c) => [c.sha, c.message]));
  const baseline = bm25Baseline(commits.map((c) => ({ id: c.sha, text: c.message })));
  const asked = questions.map((q) => ({
    question: q,
    matcher: {
      needles: q.evidence.map((s) => commitNeedle(asKept(messages.get(s) ?? ""))),
      commits: new Set(q.evidence.flatMap((s) => shas.get(s) ?? [])),
    },
    repo,
    baseline,
    evidenceDocs: new Set(q.evidence),
  }));
  return { asked, documents: commits.length, build: [report] };
}

async function prepareHistories(work: string, options: RetrievalOptions): Promise<Prepared> {
  const splits = splitsOf(options.split);
  const questions = loadHistorySet().questions.filter((q) => splits.includes(q.split));
  // Four repositories built side by side: each is a chain of processes, mostly one at a time.
  const parts = await Promise.all(
    HISTORIES.map((name) =>
      prepareHistory(
        work,
        name,
        questions.filter((q) => q.corpus === name),
      ),
    ),
  );
  return {
    asked: parts.flatMap((p) => p.asked),
    documents: parts.reduce((n, p) => n + p.documents, 0),
    build: parts.flatMap((p) => p.build),
  };
}

/**
 * The retrieval benchmark: builds each set's memory through the real command lines in a temp
 * folder, asks every question of engram (`worker recall`) and of BM25, and scores both.
 */
export async function runRetrieval(
  options: RetrievalOptions = {},
): Promise<RetrievalScenarioResult> {
  const problems = setProblems(loadNotesSet(), loadHistorySet());
  if (problems.length > 0) throw new Error(`retrieval sets are unsound:\n${problems.join("\n")}`);
  const t0 = performance.now();
  const concurrency = options.concurrency ?? Math.max(4, 2 * availableParallelism());
  const work = tempDir("retrieval");
  try {
    const which = options.set ?? "all";
    const [notesSet, historySet] = await Promise.all([
      which === "history" ? undefined : prepareNotes(work, options),
      which === "notes" ? undefined : prepareHistories(work, options),
    ]);
    // One pool for every question of both sets, in the sets' order.
    const details = await askAll(
      [...(notesSet?.asked ?? []), ...(historySet?.asked ?? [])],
      concurrency,
    );
    const figures = (p: Prepared | undefined) => {
      if (p === undefined) return undefined;
      const ids = new Set(p.asked.map((a) => a.question.id));
      return setFigures(
        details.filter((d) => ids.has(d.id)),
        p.documents,
        p.build,
        options,
      );
    };
    const notes = figures(notesSet);
    const history = figures(historySet);
    const judged = [notes, history].filter((s): s is SetFigures => s !== undefined);
    const result: RetrievalScenarioResult = {
      ...(notes ? { notes } : {}),
      ...(history ? { history } : {}),
      max_tokens_flag: await recallTakesMaxTokens(),
      seconds: round((performance.now() - t0) / 1000, 1),
      how:
        "each set's memory built by the real command lines (director init, ingest FILE or --from-git main, run --flush) " +
        "in a temp repository; each question asked by `worker recall Q --json --limit 5 --no-signal` (with --max-tokens 512 " +
        "when the build has it) and by BM25 (minisearch defaults, one document per note or commit); rank = the first " +
        "evidence among the top 5 (0 if none); tokens = the output's own count, else cl100k over the hits' text",
      target: `per set, over all its questions: engram R@5 >= ${TARGETS.r_at_5} and >= ${TARGETS.over_best_baseline}x the best baseline's, top 5 within ${TARGETS.max_tokens} tokens`,
      pass: judged.length > 0 && judged.every((s) => s.all.pass),
      summary: "",
    };
    result.summary = summaryLine(result);
    log(result.summary);
    return result;
  } finally {
    removeDir(work);
  }
}

/** One line per set: engram against BM25, all and held out. */
export function summaryLine(result: RetrievalScenarioResult): string {
  const parts: string[] = [];
  for (const [name, set] of [
    ["notes", result.notes],
    ["history", result.history],
  ] as const) {
    if (!set) continue;
    const f = (m: Metrics) => `R@5 ${m.r_at_5} R@1 ${m.r_at_1} MRR ${m.mrr} tok ${m.tokens_mean}`;
    const held = set.held_out ? `; held out engram R@5 ${set.held_out.engram.r_at_5}` : "";
    parts.push(`${name}: engram ${f(set.all.engram)} | bm25 ${f(set.all.bm25)}${held}`);
  }
  return `retrieval: ${parts.join(" || ")}; pass ${result.pass} (${result.seconds} s)`;
}

function optionsFrom(argv: readonly string[]): RetrievalOptions {
  const value = (flag: string) => {
    const at = argv.indexOf(flag);
    return at === -1 ? undefined : argv[at + 1];
  };
  const set = value("--set");
  const split = value("--split");
  if (set !== undefined && !["notes", "history", "all"].includes(set)) {
    throw new Error(`--set takes notes, history or all, not ${set}`);
  }
  if (split !== undefined && !["tuning", "held_out", "all"].includes(split)) {
    throw new Error(`--split takes tuning, held_out or all, not ${split}`);
  }
  return {
    ...(set ? { set: set as SetName | "all" } : {}),
    ...(split ? { split: split as Split | "all" } : {}),
    details: argv.includes("--details"),
  };
}

// `node dist/bench/retrieval.js`: this scenario alone, its JSON on stdout.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  Promise.resolve()
    .then(() => runRetrieval(optionsFrom(process.argv.slice(2))))
    .then(
      (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
      (err: unknown) => {
        log(`retrieval FAILED: ${(err as Error).stack ?? err}`);
        process.exitCode = 1;
      },
    );
}
