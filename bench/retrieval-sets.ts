/**
 * The labelled sets of the retrieval benchmark (test/fixtures/retrieval): their shapes, how
 * they are read, and the integrity checks the fixture test and the bench both apply.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../test/support/bins.js";
import { loadCorpus } from "../test/support/history-corpus.js";

export type SetName = "notes" | "history";
export type Split = "tuning" | "held_out";
export const SPLITS: readonly Split[] = ["tuning", "held_out"];
export const HISTORIES = ["release-please-action", "checkout", "commander", "chai"] as const;
export type HistoryName = (typeof HISTORIES)[number];

/** One note of the notes set: what an agent wrote, frozen from a paragraph of docs/. */
export interface BenchNote {
  id: string;
  kind: "fact" | "lesson" | "decision" | "convention";
  text: string;
  rationale?: string;
  topic: string | null;
  sender: string;
  /** `docs/<file>.md#<heading>` the paragraph was copied from. */
  source: string;
}

export interface BenchQuestion {
  id: string;
  question: string;
  /** Note ids (notes set) or abbreviated commit shas (history set); any one answers. */
  evidence: string[];
  split: Split;
  /** History set only: the corpus file the shas belong to. */
  corpus?: HistoryName;
}

export interface NotesSet {
  set: "notes";
  about: string;
  notes: BenchNote[];
  questions: BenchQuestion[];
}

export interface HistorySet {
  set: "history";
  about: string;
  questions: BenchQuestion[];
}

// From the package root: the bench runs from dist/, where no fixture is copied.
const DIR = join(ROOT, "test", "fixtures", "retrieval");

export function loadNotesSet(): NotesSet {
  return JSON.parse(readFileSync(join(DIR, "notes-set.json"), "utf8")) as NotesSet;
}

export function loadHistorySet(): HistorySet {
  return JSON.parse(readFileSync(join(DIR, "history-set.json"), "utf8")) as HistorySet;
}

/**
 * Everything wrong with the two sets, one line each (empty when they are sound): evidence that
 * names no note or no commit of its corpus, a question asked twice, a split far from half.
 */
export function setProblems(notes: NotesSet, history: HistorySet): string[] {
  const problems: string[] = [];
  const noteIds = new Set<string>();
  for (const n of notes.notes) {
    if (noteIds.has(n.id)) problems.push(`notes: note id ${n.id} twice`);
    noteIds.add(n.id);
  }
  const shas = new Map<string, Set<string>>(
    HISTORIES.map((h) => [h, new Set(loadCorpus(h).commits.map((c) => c.sha))]),
  );
  for (const [name, questions] of [
    ["notes", notes.questions],
    ["history", history.questions],
  ] as const) {
    const ids = new Set<string>();
    const asked = new Set<string>();
    for (const q of questions) {
      const where = `${name}: ${q.id}`;
      if (ids.has(q.id)) problems.push(`${where}: id used twice`);
      ids.add(q.id);
      const words = q.question.trim().toLowerCase().replace(/\s+/g, " ");
      if (asked.has(words)) problems.push(`${where}: question asked twice: ${q.question}`);
      asked.add(words);
      if (!SPLITS.includes(q.split)) problems.push(`${where}: split ${String(q.split)}`);
      if (q.evidence.length === 0) problems.push(`${where}: no evidence`);
      const known = name === "notes" ? noteIds : shas.get(q.corpus ?? "");
      if (known === undefined) problems.push(`${where}: corpus ${String(q.corpus)} unknown`);
      for (const e of q.evidence) {
        if (known !== undefined && !known.has(e)) problems.push(`${where}: evidence ${e} unknown`);
      }
    }
    const fixed = fixedSplits(questions.map((q) => q.id));
    for (const q of questions) {
      if (fixed.get(q.id) !== q.split)
        problems.push(`${name}: ${q.id}: split is not the fixed one`);
    }
    const tuning = questions.filter((q) => q.split === "tuning").length;
    if (Math.abs(tuning - questions.length / 2) > 1) {
      problems.push(`${name}: ${tuning} of ${questions.length} questions are tuning, not half`);
    }
  }
  return problems;
}

/**
 * The split each question was given once, before any recall: ids sorted by the SHA-256 of
 * the id, the first half `tuning`, the rest `held_out`.
 */
export function fixedSplits(ids: readonly string[]): Map<string, Split> {
  const digest = (id: string) => createHash("sha256").update(id).digest("hex");
  const order = [...ids].sort((a, b) => (digest(a) < digest(b) ? -1 : 1));
  const half = Math.floor(order.length / 2);
  return new Map(order.map((id, i) => [id, i < half ? "tuning" : "held_out"]));
}
