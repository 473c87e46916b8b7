/**
 * The retrieval benchmark's labelled sets (test/fixtures/retrieval) are sound: every piece of
 * evidence names a note of the set or a commit of its history, no question is asked twice,
 * and the tuning / held-out split is the fixed half-and-half one. Recall floors come later.
 */
import { describe, expect, it } from "vitest";
import {
  fixedSplits,
  HISTORIES,
  loadHistorySet,
  loadNotesSet,
  setProblems,
} from "../../bench/retrieval-sets.js";
import { loadCorpus } from "../../test/support/history-corpus.js";

const notes = loadNotesSet();
const history = loadHistorySet();

describe("the notes set", () => {
  it("holds a few hundred notes of varied lengths, with unique ids and known kinds", () => {
    expect(notes.notes.length).toBeGreaterThanOrEqual(300);
    expect(notes.notes.length).toBeLessThanOrEqual(650);
    expect(new Set(notes.notes.map((n) => n.id)).size).toBe(notes.notes.length);
    const long = notes.notes.filter((n) => n.text.length > 200).length;
    expect(long).toBeGreaterThan(notes.notes.length / 4);
    for (const n of notes.notes) {
      expect(["fact", "lesson", "decision", "convention"], n.id).toContain(n.kind);
      expect(n.text.length, n.id).toBeGreaterThan(0);
      expect(n.sender, n.id).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });

  it("asks questions whose evidence is notes of the set", () => {
    const ids = new Set(notes.notes.map((n) => n.id));
    expect(notes.questions.length).toBeGreaterThanOrEqual(60);
    const unknown = notes.questions.flatMap((q) => q.evidence.filter((e) => !ids.has(e)));
    expect(unknown).toEqual([]);
    expect(notes.questions.every((q) => q.evidence.length > 0)).toBe(true);
  });
});

describe("the history set", () => {
  it("asks questions whose evidence is commits of the named history", () => {
    expect(history.questions.length).toBeGreaterThanOrEqual(80);
    const shas = new Map(
      HISTORIES.map((h) => [h as string, new Set(loadCorpus(h).commits.map((c) => c.sha))]),
    );
    const unknown = history.questions.flatMap((q) =>
      q.evidence.filter((s) => !shas.get(q.corpus ?? "")?.has(s)).map((s) => `${q.id} ${s}`),
    );
    expect(unknown).toEqual([]);
    for (const h of HISTORIES) {
      expect(history.questions.filter((q) => q.corpus === h).length, h).toBeGreaterThan(10);
    }
  });
});

describe("both sets", () => {
  it("ask no question twice", () => {
    for (const set of [notes, history]) {
      const words = set.questions.map((q) => q.question.trim().toLowerCase());
      expect(new Set(words).size, set.set).toBe(words.length);
      expect(new Set(set.questions.map((q) => q.id)).size, set.set).toBe(words.length);
    }
  });

  it("split their questions half tuning, half held out, by the hash of the id", () => {
    for (const set of [notes, history]) {
      const fixed = fixedSplits(set.questions.map((q) => q.id));
      expect(set.questions.filter((q) => q.split !== fixed.get(q.id))).toEqual([]);
      const tuning = set.questions.filter((q) => q.split === "tuning").length;
      expect(Math.abs(tuning - set.questions.length / 2), set.set).toBeLessThanOrEqual(1);
    }
  });

  it("pass the bench's own check", () => {
    expect(setProblems(notes, history)).toEqual([]);
  });
});
