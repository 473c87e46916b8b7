/**
 * The learned decision scorer of the seventh round (test/fixtures/history-corpus/README.md),
 * measured and not wired into the import: the evidence features of one commit (what it changed:
 * kinds of paths, set-ups and removals, size; its form: conventional type, a breaking mark, a
 * pull request; a small fixed vocabulary; the rules' own verdict) and the probability a weight
 * table gives them. No feature names a project; the list is fixed, so the weights cannot
 * memorise one history. Pure and deterministic: a dot product and a logistic function.
 */
import { type CommitClass, type CommitText, classifyCommit } from "../src/core/history/classify.js";
import { type CommitChanges, type PathKind, readEvidence } from "../src/core/history/evidence.js";

const TYPES = [
  "feat",
  "fix",
  "docs",
  "test",
  "style",
  "refactor",
  "perf",
  "build",
  "ci",
  "chore",
  "revert",
  "other",
] as const;
const KINDS: readonly PathKind[] = [
  "ci",
  "manifest",
  "lockfile",
  "runtime",
  "tooling",
  "policy",
  "record",
  "docs",
  "changelog",
  "test",
  "locale",
  "example",
  "migration",
  "source",
];
/** Words of the description, each one feature: a small vocabulary of choices and of upkeep. */
const WORDS: readonly [string, RegExp][] = [
  ["w:default", /\bdefaults?\b/i],
  ["w:require", /\b(require[sd]?|requiring|mandatory|must)\b/i],
  ["w:deprecate", /\b(un-?)?deprecat\w*/i],
  ["w:support", /\bsupport(s|ed)?\b/i],
  ["w:instead", /\binstead of\b/i],
  ["w:no-longer", /\bno longer\b|\b(do not|don't|never|stop)\b/i],
  ["w:in-favour", /\bin favou?r of\b|\bprefer\w*\b/i],
  ["w:switch", /\b(switch|migrate|swap|move)\w* (\S+ ){0,4}(to|from)\b/i],
  ["w:policy", /\b(permissions?|security|csrf|cors|oauth2?|auth\w*|access|token|sign-?in|tls)\b/i],
  ["w:runtime", /\b(node(\.?js)?|python|golang|go|ruby|java|deno|bun|docker|image)\b/i],
  ["w:version", /\bv?\d+(\.\d+)+\b|\bv\d+\b/i],
  ["w:interface", /\b(api|options?|flags?|config\w*|settings?|inputs?|outputs?|endpoints?)\b/i],
  ["w:dependency", /\b(dependency|dependencies|library|package|module)\b/i],
  ["w:ci", /\b(ci|workflows?|actions?|pipeline)\b/i],
  ["w:only", /\bonly\b|\b(all|every)\b/i],
  ["w:should", /\b(should|now)\b/i],
  ["w:code", /[a-z][A-Z]|`|\(\)|\w\.\w/],
  ["w:typo", /\b(typos?|readme|docs?|comments?|tests?|lint|format\w*)\b/i],
  ["w:bug", /\b(bug|crash|error|issue|broken|wrong|incorrect)\b/i],
];
/** The description's first word, in groups of verbs that act alike. */
const FIRST: readonly [string, RegExp][] = [
  ["f:adopt", /^(adopt|adopts|introduce|introduces|enable|enables|use|uses|using)\b/i],
  ["f:drop", /^(drop|drops|dropped|remove|removes|removed|delete|deletes|disable|disables)\b/i],
  ["f:switch", /^(switch|migrate|move|moves|replace|replaces|swap|swaps)\w*\b/i],
  ["f:require", /^(require|requires|enforce|restrict|pin|pins|only|disallow|forbid|block)\b/i],
  ["f:add", /^(add|adds|added|implement|implements|support|supports|allow|allows|new)\b/i],
  ["f:fix", /^(fix|fixes|fixed|correct|handle|avoid|prevent|resolve)\b/i],
  ["f:update", /^(update|updates|upgrade|upgrades|bump|bumps|raise|raises)\b/i],
  ["f:rename", /^(rename|renames|renamed|split)\b/i],
  ["f:set", /^(set|sets|default|defaults|make|makes|change|changes)\b/i],
  ["f:negate", /^(do not|don't|never|always|no longer|stop)\b/i],
  ["f:deprecate", /^(deprecate|deprecates|deprecated)\b/i],
];

/** The features' names, in the order `commitFeatures` gives their values. */
export const FEATURE_NAMES: readonly string[] = [
  "bias",
  "conventional",
  ...TYPES.map((t) => `type:${t}`),
  "breaking",
  "scope",
  "pr",
  "merge",
  "body:none",
  "body:length",
  "paths:unknown",
  ...KINDS.map((k) => `kind:${k}`),
  "prose-only",
  "tests-only",
  "tooling-only",
  "set-up-or-dropped",
  "workflow-set-up-or-dropped",
  "upgrade-guide",
  "documented-interface",
  "removal",
  "files",
  "lines:unknown",
  "lines:added",
  "lines:deleted",
  "lines:deleted-share",
  "subject:words",
  ...WORDS.map(([n]) => n),
  ...FIRST.map(([n]) => n),
  "x:drop-tooling",
  "x:adopt-tooling",
  "x:choice-source-only",
  "rules:lesson-or-convention",
  "rules:candidate",
  "rules:confidence",
  "rules:at-line",
];

/** What a commit is scored on: as the classifier read it (a merge by its pull request's title). */
export interface ScoredCommit {
  /** The rules' verdict on the commit, or on a merge's title. */
  cls: CommitClass;
  /** The text read: a merge's pull request title, else the subject without its prefix. */
  description: string;
  body: string;
  merge: boolean;
  /** The subject (a merge's title) has a conventional prefix. */
  conventional: boolean;
  changes?: CommitChanges;
}

/** The feature values of one commit, in `FEATURE_NAMES`'s order. */
export function commitFeatures(commit: ScoredCommit, line: number): number[] {
  const { cls, description, body } = commit;
  const type = (TYPES as readonly string[]).includes(cls.type) ? cls.type : "other";
  const evidence = readEvidence(commit.changes);
  const kinds = evidence?.kinds ?? new Set<PathKind>();
  const has = (b: boolean | undefined) => (b === true ? 1 : 0);
  const added = commit.changes?.added;
  const deleted = commit.changes?.deleted;
  const linesKnown = added !== undefined && deleted !== undefined;
  const words = (re: RegExp) => has(re.test(description));
  const first = FIRST.map(([, re]) => words(re));
  const firstOf = (name: string) => first[FIRST.findIndex(([n]) => n === name)] ?? 0;
  const tooling = has(
    kinds.has("ci") || kinds.has("tooling") || kinds.has("manifest") || kinds.has("runtime"),
  );
  const silent =
    evidence !== undefined && [...kinds].every((k) => k === "source" || k === "test")
      ? has(kinds.has("source"))
      : 0;
  const choiceWord = has(WORDS.slice(0, 8).some(([, re]) => re.test(description)));
  const confidence = cls.decision ? (cls.decision.confidence ?? 1) : 0;
  return [
    1,
    has(commit.conventional),
    ...TYPES.map((t) => has(type === t)),
    has(cls.breaking),
    has(cls.scope !== undefined),
    has(cls.pr !== undefined),
    has(commit.merge),
    has(body.trim() === ""),
    Math.min(1, Math.log1p(body.length) / 8),
    has(evidence === undefined),
    ...KINDS.map((k) => has(kinds.has(k))),
    has(evidence?.proseOnly),
    has(evidence?.testsOnly),
    has(evidence?.toolingOnly),
    has(evidence?.setUpOrDropped),
    has(evidence?.workflowSetUpOrDropped),
    has(evidence?.upgradeGuide),
    has(evidence?.documentedInterface),
    has(evidence?.removal),
    evidence ? Math.min(1, Math.log2(1 + evidence.files) / 8) : 0,
    has(!linesKnown),
    linesKnown ? Math.min(1, Math.log1p(added) / 10) : 0,
    linesKnown ? Math.min(1, Math.log1p(deleted) / 10) : 0,
    linesKnown && added + deleted > 0 ? deleted / (added + deleted) : 0,
    Math.min(1, description.split(/\s+/).length / 20),
    ...WORDS.map(([, re]) => words(re)),
    ...first,
    firstOf("f:drop") * tooling,
    firstOf("f:adopt") * tooling,
    choiceWord * silent,
    has(cls.lesson !== undefined || cls.convention !== undefined),
    has(cls.decision !== undefined),
    confidence,
    has(cls.decision !== undefined && confidence >= line),
  ];
}

const CONVENTIONAL_PREFIX = /^[a-z]+(\([^()]{1,64}\))?!?:\s+\S/i;

/**
 * A commit as the scorer reads it, from the rules' verdict on it: a merge by its pull request's
 * title (read as a commit of its own, with the merge's paths); undefined for noise the rules
 * count (a release, a dependency bump, a content-free commit, a merge without a title).
 */
export function scoredCommit(commit: CommitText, cls: CommitClass): ScoredCommit | undefined {
  const merge = (commit.parents ?? 1) > 1 || cls.noise === "merge";
  const changes = commit.changes ? { changes: commit.changes } : {};
  if (!merge) {
    if (cls.noise !== undefined) return undefined;
    const conventional = CONVENTIONAL_PREFIX.test(commit.subject.trim());
    return {
      cls,
      description: cls.description,
      body: commit.body,
      merge,
      conventional,
      ...changes,
    };
  }
  const [title = "", ...rest] = commit.body.trim().split("\n");
  if (title.trim() === "" || /^Merge\b/i.test(title)) return undefined;
  const body = rest.join("\n");
  const read = classifyCommit({ ...commit, subject: title.trim(), body, parents: 1 });
  if (read.noise !== undefined) return undefined;
  const conventional = CONVENTIONAL_PREFIX.test(title.trim());
  return { cls: read, description: read.description, body, merge, conventional, ...changes };
}

/** The probability that a scored commit records a decision, under `weights` (by feature). */
export function decisionProbability(
  commit: ScoredCommit,
  weights: readonly number[],
  line: number,
): number {
  const x = commitFeatures(commit, line);
  let z = 0;
  for (let i = 0; i < x.length; i++) z += (weights[i] ?? 0) * (x[i] as number);
  return 1 / (1 + Math.exp(-z));
}
