/** The labelled commit histories of test/fixtures/history-corpus, and their scores. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { classifyMessage } from "../../src/core/history/git-events.js";
import { ROOT } from "./bins.js";

export interface CorpusCommit {
  sha: string;
  parents: number;
  bot: boolean;
  message: string;
  decision: boolean;
  held_out?: boolean;
}

export interface Corpus {
  repository: string;
  licence: string;
  style: string;
  commits: CorpusCommit[];
}

export interface CorpusScore {
  commits: number;
  labelled: number;
  found: number;
  called: number;
  recall: number;
  precision: number;
  /** `sha subject` of labelled decisions the import did not call one. */
  missed: string[];
  /** `sha subject => title` of what the import called a decision, labelled otherwise. */
  wrong: string[];
}

// From the package root: the bench runs this module from dist/, where no fixture is copied.
const DIR = join(ROOT, "test", "fixtures", "history-corpus");

export function loadCorpus(name: string): Corpus {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Corpus;
}

/** What the import makes of a commit: a decision's title, or undefined. */
export function importedDecision(c: CorpusCommit): string | undefined {
  const { cls } = classifyMessage({
    message: c.message,
    parents: c.parents,
    // Only whether the author is a bot matters to the classifier.
    author: c.bot ? "bot <bot[bot]@users.noreply.github.com>" : "someone <someone@example.com>",
  });
  return cls.decision?.title;
}

/**
 * Recall (labelled decisions the import calls decisions) and precision (what it calls
 * decisions that are labelled so), over the tuned or the held-out commits.
 */
export function scoreCorpus(
  corpus: Corpus,
  part: { heldOut: boolean },
  decide: (c: CorpusCommit) => string | boolean | undefined = importedDecision,
): CorpusScore {
  const commits = corpus.commits.filter((c) => (c.held_out === true) === part.heldOut);
  let labelled = 0;
  let found = 0;
  let called = 0;
  const missed: string[] = [];
  const wrong: string[] = [];
  for (const c of commits) {
    const title = decide(c);
    const subject = c.message.split("\n")[0] ?? "";
    if (c.decision) labelled++;
    if (title !== undefined && title !== false) {
      called++;
      if (c.decision) found++;
      else wrong.push(`${c.sha.slice(0, 8)} ${subject} => ${title}`);
    } else if (c.decision) missed.push(`${c.sha.slice(0, 8)} ${subject}`);
  }
  return {
    commits: commits.length,
    labelled,
    found,
    called,
    recall: labelled === 0 ? 1 : found / labelled,
    precision: called === 0 ? 1 : found / called,
    missed,
    wrong,
  };
}
