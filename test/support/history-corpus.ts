/** The labelled commit histories of test/fixtures/history-corpus, and their scores. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DependencyChange } from "../../src/core/history/dependencies.js";
import type { ChangedPath, CommitChanges } from "../../src/core/history/evidence.js";
import { classifyHistory } from "../../src/core/history/git-events.js";
import type { SettingChange } from "../../src/core/history/settings.js";
import { childEnv, ROOT } from "./bins.js";

export interface CorpusCommit {
  sha: string;
  parents: number;
  /** Abbreviated like `sha`, first parent first; only where the history has merges. */
  parent_shas?: string[];
  bot: boolean;
  message: string;
  decision: boolean;
  held_out?: boolean;
  /** `--name-status` letter and path against the first parent (`M src/a.ts`); at most 60. */
  files?: string[];
  /** How many paths changed, where more than `files` lists. */
  files_total?: number;
  /** Lines added and deleted (`--numstat`), where the repository still had the blobs. */
  added?: number;
  deleted?: number;
  /** The dependencies its manifests added and removed (scripts/capture-content.ts). */
  dependencies?: DependencyChange;
  /** What its CI, deployment and install files changed (scripts/capture-content.ts). */
  settings?: readonly SettingChange[];
}

export interface Corpus {
  repository: string;
  licence: string;
  kind?: string;
  style: string;
  scope?: string;
  /** The whole history is held out: never looked at while rules change. */
  held_out?: boolean;
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
  /** Labelled decisions found whose decision carries a rationale. */
  with_rationale: number;
}

export interface ImportedDecision {
  title: string;
  rationale?: string;
  confidence?: number;
}

/** The corpus names, tuned first, then the histories held out whole (README.md). */
export const CORPUS_HISTORIES = [
  "release-please-action",
  "checkout",
  "commander",
  "chai",
  "got",
  "changesets",
  "miniflux",
  "express",
  "memos",
  "umami",
  "linkding",
  "yargs",
  "uptime-kuma",
  "gotify",
  "excalidraw",
] as const;

// From the package root: the bench runs this module from dist/, where no fixture is copied.
const DIR = join(ROOT, "test", "fixtures", "history-corpus");

export function loadCorpus(name: string): Corpus {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Corpus;
}

/**
 * What the import makes of each commit of a history, read whole and oldest first as `ingest
 * --from-git` reads it (a pull request's title from its merge commit included): sha ->
 * decision.
 */
export function importedDecisions(corpus: Corpus): Map<string, ImportedDecision> {
  const commits = [...corpus.commits].reverse();
  const read = classifyHistory(
    commits.map((c) => ({
      sha: c.sha,
      message: c.message,
      parents: c.parents,
      ...(c.parent_shas ? { parentShas: c.parent_shas } : {}),
      // Only whether the author is a bot matters to the classifier.
      author: c.bot ? "bot <bot[bot]@users.noreply.github.com>" : "someone <someone@example.com>",
      ...(c.files ? { changes: corpusChanges(c) } : {}),
    })),
  );
  const out = new Map<string, ImportedDecision>();
  read.forEach((r, i) => {
    if (r.cls.decision) out.set((commits[i] as CorpusCommit).sha, r.cls.decision);
  });
  return out;
}

/** The changed paths and line counts of a corpus commit, as `git log` gives them to the import. */
export function corpusChanges(c: CorpusCommit): CommitChanges {
  const paths: ChangedPath[] = (c.files ?? []).map((f) => ({
    status: f.slice(0, 1),
    path: f.slice(2),
  }));
  return {
    paths,
    ...(c.files_total !== undefined ? { total: c.files_total } : {}),
    ...(c.added !== undefined && c.deleted !== undefined
      ? { added: c.added, deleted: c.deleted }
      : {}),
    ...(c.dependencies !== undefined ? { dependencies: c.dependencies } : {}),
    ...(c.settings !== undefined ? { settings: c.settings } : {}),
  };
}

/**
 * What the import calls a decision on each commit of a history, at the confidence `line`: a
 * decision below it is not called one (the import proposes it instead).
 */
export function callsAtLine(
  corpus: Corpus,
  line = 0,
): (c: CorpusCommit) => ImportedDecision | undefined {
  const imported = importedDecisions(corpus);
  return (c) => {
    const d = imported.get(c.sha);
    return d !== undefined && (d.confidence ?? 1) >= line ? d : undefined;
  };
}

/** Whether a commit belongs to the held-out part of its history (README.md). */
export function isHeldOut(corpus: Corpus, c: CorpusCommit): boolean {
  return corpus.held_out === true || c.held_out === true;
}

/**
 * Recall (labelled decisions the import calls decisions) and precision (what it calls
 * decisions that are labelled so), over the tuned or the held-out commits. A decision whose
 * confidence is below `line` is not called one (the import proposes it instead). `labels`
 * (sha -> decision) scores against another labelling than the corpus's own: a commit it does
 * not hold is left out.
 */
export function scoreCorpus(
  corpus: Corpus,
  part: { heldOut: boolean; line?: number; labels?: ReadonlyMap<string, boolean> },
  decide?: (c: CorpusCommit) => ImportedDecision | boolean | undefined,
): CorpusScore {
  const decideOf = decide ?? callsAtLine(corpus, part.line ?? 0);
  const labels = part.labels;
  const labelOf = (c: CorpusCommit) =>
    labels === undefined ? c.decision === true : labels.get(c.sha);
  const commits = corpus.commits.filter(
    (c) => isHeldOut(corpus, c) === part.heldOut && labelOf(c) !== undefined,
  );
  let labelled = 0;
  let found = 0;
  let called = 0;
  let withRationale = 0;
  const missed: string[] = [];
  const wrong: string[] = [];
  for (const c of commits) {
    const decision = decideOf(c);
    const subject = c.message.split("\n")[0] ?? "";
    const labelledDecision = labelOf(c) === true;
    if (labelledDecision) labelled++;
    if (decision !== undefined && decision !== false) {
      called++;
      const title = typeof decision === "object" ? decision.title : "(decision)";
      if (labelledDecision) {
        found++;
        if (typeof decision === "object" && decision.rationale) withRationale++;
      } else wrong.push(`${c.sha.slice(0, 8)} ${subject} => ${title}`);
    } else if (labelledDecision) missed.push(`${c.sha.slice(0, 8)} ${subject}`);
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
    with_rationale: withRationale,
  };
}

/** A path fast-import takes as written: no line break, no leading quote. */
function writable(path: string): boolean {
  return path !== "" && !/[\n"]/.test(path);
}

const DAY = 86400;
const START = Date.UTC(2020, 0, 6) / 1000;

/**
 * The corpus as a real git repository at `dir` (already `git init`ed): every commit with its
 * message and the paths it changed (added, modified, deleted, as the corpus lists them; a
 * first commit holds the paths changed before they are added), oldest first, one a day from
 * 2020-01-06, merges with their parents where the corpus records them (linear otherwise), by
 * one `git fast-import`; `main` checked out. `paths: "synthetic"` writes each commit a small
 * file of its own instead (as before paths were recorded). Returns the corpus commits in the
 * order written, with the time each was given.
 */
export function writeCorpusRepo(
  dir: string,
  corpus: Corpus,
  options: { paths?: "real" | "synthetic" } = {},
): { commit: CorpusCommit; at: number }[] {
  if (options.paths === "synthetic") {
    corpus = { ...corpus, commits: corpus.commits.map(({ files: _f, ...c }) => c) };
  }
  const known = new Map(corpus.commits.map((c) => [c.sha, c]));
  // Oldest first, parents before children, whatever order the corpus lists them in.
  const order: CorpusCommit[] = [];
  const placed = new Set<string>();
  const visit = (c: CorpusCommit) => {
    if (placed.has(c.sha)) return;
    placed.add(c.sha);
    for (const p of c.parent_shas ?? []) {
      const parent = known.get(p);
      if (parent) visit(parent);
    }
    order.push(c);
  };
  for (const c of [...corpus.commits].reverse()) visit(c);

  // No trimming: a message may end in spaces, and the byte count must hold them.
  const data = (text: string) => `data ${Buffer.byteLength(text, "utf8")}\n${text}`;
  const marks = new Map<string, number>();
  const chunks: string[] = [];
  const written: { commit: CorpusCommit; at: number }[] = [];
  // A path a commit modifies or deletes before any commit adds it exists from a first commit
  // of its own, so that git reads each commit's changes as the corpus lists them.
  const seen = new Set<string>();
  const seed = new Set<string>();
  for (const c of order) {
    for (const f of c.files ?? []) {
      const path = f.slice(2);
      if (!seen.has(path) && !f.startsWith("A ")) seed.add(path);
      seen.add(path);
    }
  }
  const SEED = order.length + 1;
  const maintainer = "A Maintainer <maintainer@example.invalid>";
  if (seed.size > 0) {
    const files = [...seed]
      .filter(writable)
      .flatMap((path) => [`M 100644 inline ${path}`, data("seed\n")]);
    chunks.push(
      [
        "reset refs/heads/import",
        "commit refs/heads/import",
        `mark :${SEED}`,
        `author ${maintainer} ${START - DAY} +0000`,
        `committer ${maintainer} ${START - DAY} +0000`,
        data("Seed the paths the labelled history changes\n"),
        ...files,
      ].join("\n") + "\n\n",
    );
  }
  order.forEach((c, i) => {
    const mark = i + 1;
    const at = START + i * DAY;
    const who = c.bot
      ? "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"
      : maintainer;
    let parents = c.parent_shas
      ? c.parent_shas.flatMap((p) => (marks.has(p) ? [marks.get(p) as number] : []))
      : i > 0
        ? [i]
        : [];
    if (parents.length === 0 && seed.size > 0) parents = [SEED];
    const lines = parents.length === 0 ? ["reset refs/heads/import"] : [];
    lines.push(
      "commit refs/heads/import",
      `mark :${mark}`,
      `author ${who} ${at} +0000`,
      `committer ${who} ${at} +0000`,
      data(`${c.message}\n`),
      ...parents.map((p, n) => `${n === 0 ? "from" : "merge"} :${p}`),
    );
    if (c.files !== undefined) {
      // The commit's own paths, against its first parent: deleted, or written anew.
      for (const f of c.files) {
        const path = f.slice(2);
        if (!writable(path)) continue;
        if (f.startsWith("D ")) lines.push(`D ${path}`);
        else lines.push(`M 100644 inline ${path}`, data(`${c.sha}\n`));
      }
    } else if (parents.length < 2) {
      const path = `src/part${i % 7}.txt`;
      lines.push(`M 100644 inline ${path}`, data(`${c.sha}\n`));
    }
    chunks.push(`${lines.join("\n")}\n\n`);
    marks.set(c.sha, mark);
    written.push({ commit: c, at });
  });
  chunks.push(`reset refs/heads/main\nfrom :${order.length}\n\n`);
  execFileSync("git", ["fast-import", "--quiet"], {
    cwd: dir,
    input: chunks.join(""),
    env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
    stdio: ["pipe", "ignore", "pipe"],
  });
  execFileSync("git", ["checkout", "-q", "-f", "main"], {
    cwd: dir,
    env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
  });
  return written;
}
