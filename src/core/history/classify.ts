import { cutText } from "../model/text.js";
import { decisionByEvidence, RUNTIME_BUMP, WORDING, weighDecision } from "./confidence.js";
import { CONTENT_FREE } from "./content-free.js";
import { withDependencies } from "./dependencies.js";
import {
  botSetUpOnly,
  type CommitChanges,
  readEvidence,
  writesDecisionRecord,
} from "./evidence.js";
import { withSettings } from "./settings.js";

/**
 * What a commit is worth remembering, decided by rules on its message (no language model):
 * noise to be counted, a decision, a lesson, a convention, or a change of some area.
 */

/** Commits counted, never remembered one by one. */
export const NOISE_KINDS = ["merge", "release", "dependency", "trivial"] as const;
export type NoiseKind = (typeof NOISE_KINDS)[number];

/** What the classifier needs of a commit (the subject and body as `parseCommitMessage` splits them). */
export interface CommitText {
  subject: string;
  body: string;
  /** Number of parents; more than one is a merge. */
  parents?: number;
  /** `Name <email>` of the author, for bots. */
  author?: string;
  /** The message has a `Decision:` trailer: that is the decision, none is inferred. */
  decisionTrailer?: boolean;
  /** What the commit changed, where known: evidence for or against a decision. */
  changes?: CommitChanges;
}

export interface CommitClass {
  /** Set for noise: the commit is only counted. */
  noise?: NoiseKind;
  /** Conventional type when the subject has one, otherwise inferred from its first word. */
  type: string;
  scope?: string;
  /** The subject without its conventional prefix and PR suffix. */
  description: string;
  /** `(#123)` in the subject or `Merge pull request #123`. */
  pr?: number;
  breaking: boolean;
  /**
   * An inferred decision; `confidence` in [0,1] weighs its wording and what the commit
   * changed (absent means certain): below the import's line it is proposed, not remembered.
   */
  decision?: { title: string; rationale?: string; confidence?: number };
  lesson?: string;
  convention?: string;
}

const CONVENTIONAL = /^([a-z]+)(?:\(([^()]{1,64})\))?(!)?:\s+(\S.*)$/i;
const TYPES = new Set([
  "feat",
  "fix",
  "docs",
  "doc",
  "style",
  "refactor",
  "perf",
  "test",
  "tests",
  "build",
  "ci",
  "chore",
  "revert",
  "deps",
  "release",
  "decision",
]);
/** Whether a `key:` opening a line is a conventional commit type (a title, not a trailer). */
export function isConventionalType(key: string): boolean {
  return key === key.toLowerCase() && TYPES.has(key) && key !== "decision";
}
/** `[breaking]`, `Breaking:`, `(breaking change)`, or gitmoji's 💥 marks a subject breaking. */
const BREAKING_SUBJECT =
  /^(\[breaking( change)?\]|breaking( change)?:|💥|:boom:)|[[(]breaking( change)?[\])]/i;
/** A pull request template's "Breaking change" box, ticked by the author. */
const BREAKING_TICKED = /^[ \t]*[-*][ \t]*\[x\][ \t]*(\S+ ){0,3}breaking change\b/im;
const PR_SUFFIX = /\s*\(#(\d+)\)\s*$/;
const MERGE_PR = /^Merge pull request #(\d+)\b/i;
const BOT = /\[bot\]|\b(dependabot|renovate|greenkeeper|snyk-bot|depfu|pyup-bot|mergify)\b/i;

const RELEASE = [
  /^v?\d+\.\d+(\.\d+)?([-+][\w.]+)?$/i,
  /^(release|releasing|publish|published|prepare release|cut release)\b/i,
  /^(bump|update|set|increment)( the)? version\b/i,
  /^version (bump|\d)/i,
  /^(release|tag) v?\d+\.\d+/i,
  /^\[?release\]?\b/i,
];
const DEPENDENCY = [
  /^bump\s+\S+.*\bfrom\s+\S+\s+to\s+\S+/i,
  /^bump the \S+ group\b/i,
  /^(update|upgrade|bump|pin) (all |the )?(dev[- ])?(dependency|dependencies|deps|devdependencies|lock ?file|package-lock|yarn\.lock|pnpm-lock)\b/i,
  /^(update|upgrade|bump) \S+ (to|from) v?\d[\w.]*( to v?\d[\w.]*)?$/i,
  /^lock ?file maintenance\b/i,
  /^pin dependencies\b/i,
  /^update \S+ digest to\b/i,
];
const DEPENDENCY_SCOPES = /^(deps|deps-dev|dev-deps|dependencies|dependabot|renovate)$/i;

/** Stated choices, tried on the description (and on each sentence of a merged PR's title). */
const CHOICE = [
  /\bin favou?r of\b/i,
  // "switch to X", "migrate from X to Y", "Switch the parser to X"; not "a switch statement to".
  /\b(switch|switched|switches|switching|migrate|migrated|migrates|migrating) (from \S+ )?to\b/i,
  /^(switch|migrate)\w* (\S+ ){1,6}to\b/i,
  /\bby default\b/i,
  /\b(should |now |must )?defaults? to\b/i,
  /\bdefault (is|becomes|now)\b/i,
  /\bas (the |a )?default\b/i,
  /\bmake \S.* (the )?default\b/i,
  /^(require|requires|(soft-)?deprecate|(soft-)?deprecates|deprecated|prefer|adopt|disallow|forbid|enforce|restrict|restricts)\b/i,
  /\b(and|but|now) (require|requires|deprecate|deprecates)\b/i,
  /^(drop|drops|dropped) (support|\S+ support)\b/i,
  // Support ended for a platform, database or runtime: "remove MySQL 5.7 support".
  /^(remove|removes|removed|end|ends|ended|discontinue|discontinues|discontinued) (\S+ ){0,3}support\b(?! for (a |an |the )?(bug|issue|typo))/i,
  /^(drop|drops|dropped) (node|python|ruby|go|java|ie|php)\b/i,
  /^(drop|drops|dropped|remove|removes|removed) .+ in favou?r of \S/i,
  /^(replace|replaces|replaced) .+ (with|by)\b/i,
  /^(move|moves|moved|moving) (away )?from \S.* to \S/i,
  /\b(is|are|becomes?) now (the )?default\b/i,
  /^(use|uses) .+ (by default|instead|everywhere|for (all|every|each))\b/i,
  /^stop (using|supporting)\b/i,
  /\bdecided?\b.*\bto\b/i,
  // A runtime or module system chosen: "use node 24", "update to node 16", "switch to ESM".
  /\b(to use|use|to) (node|node\.js|nodejs|python|ruby|java|go|deno|bun) ?v?\d+\b/i,
  /\b(run|runs) (\S+ ){0,3}on (node|node\.js|nodejs|python|ruby|java|go|deno|bun) ?v?\d+\b/i,
  /\bdefault runtime\b/i,
  /\b(to|as) (esm|esm-only|es modules?|commonjs|typescript)\b/i,
  /^(drop|drops|dropped) (eol |end-of-life |legacy |old )?(node|node\.js|python|ruby|go|java|ie|php)\b/i,
  // A default stated, changed or restored: "default X to Y", "restore the X default".
  /^defaults?\b/i,
  /\b(restore|restores|restored|change|changes|changed|flip|flips|flipped)\b.*\bdefaults?\b/i,
  /^(set|sets) (the |a )?(new )?defaults?\b|^(set|sets) \S.* as (the )?default\b/i,
  // What is supported, as a policy: "only support PostgreSQL 14+", "officially support ARM".
  /^(only|officially) (support|supports|supported)\b/i,
  // A setting every install must now give: "DB_PASSWORD is required".
  /\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b.*\b([Rr]equired|[Mm]andatory|must be set)\b/,
  /\bdefaults?\b.*\bshould\b/i,
  /\bshould\b.+\bnot\b/i,
  /^(explicitly )?(disable|disables|enable|enables)\b.+\b(unless|by default|only (when|if|for))\b/i,
  // A policy or a tool adopted: "pin actions by hash", "block X", "enforce Y", "swap to Z".
  /^(pin|pins|pinned|block|blocks|blocked|enforce|enforces|enforced) \S/i,
  /^(swap|swapped|swaps|move|moved|moves) (over )?to\b/i,
  /^(swap|swapped|swaps) (out )?\S.* (for|with) \S/i,
  /^(change|changes|changed) .+ to\b/i,
  /^stop (\w+ly )?\w+ing\b/i,
  // A public interface renamed or split: "rename the inputs and outputs", "split the workflow".
  /^(rename|renames|renamed|split|splits) (the |its |our )?(\S+ )?(inputs?|outputs?|options?|flags?|commands?|api|interfaces?|workflows?|packages?|modules?|endpoints?|config|settings)\b/i,
  /\b(prefer|prefers|preferred|favou?r|favou?rs|favou?red) \S+ (over|to)\b/i,
  /\b(un-?deprecate|un-?deprecates|un-?deprecated)\b/i,
  // The runtimes supported or tested: "update supported Node versions", "ci: update node-version".
  /\b(update|updates|updated|change|changes|changed|raise|raises|raised)\b.*\b(node(\.js)?[ -]versions?|engines?\b.*\bnode|(supported|minimum|required) (\S+ )?versions?)\b/i,
  // A rule made general: "apply CSRF checks to all non-safe methods".
  /^(apply|applies|applied|extend|extends|extended) \S.* to (all|every)\b/i,
  // A limit users meet, moved: "raise the item IDs limit to 10000".
  /^(raise|raises|raised|lower|lowers|lowered|increase|increases|increased|decrease|decreases|decreased)\b.*\b(limit|maximum|minimum|timeout|threshold)s?\b.*\bto \d/i,
  // A library adopted in place of the project's own code: "use external pathval module".
  /\b(use|uses|using|adopt|adopts) (an? |the )?(external|third[- ]party|upstream) \S/i,
  /\b(to use|using) (the |an? )?\S+ (module|library|package)\b/i,
  // A public interface removed, named as code: "Remove hasProperty util", "drop the --fast flag".
  // (Case matters: camelCase is how the name reads as code.)
  /^([Rr]emove[sd]?|[Dd]elete[sd]?|[Dd]rop(s|ped)?) (the )?(`[^`]+`|--?[a-z][\w-]+|[a-z]+[A-Z]\w*) (utils?|utility|utilities|helpers?|api|API|methods?|options?|flags?|inputs?|outputs?|commands?|exports?)\b/,
  // A browser security policy set: "Use sandbox CSP for viewing assets", "Added frame-src to
  // CSP", "Updated CSP rules" (what a page may load, frame or run is who may do what).
  /^(use|uses|used|serve|serves|served|allow|allows|allowed|add|adds|added|update|updates|updated|set|sets|apply|applies|applied|enable|enables|enabled|tighten|tightens|tightened|relax|relaxes|relaxed)\b.*(\b(csp|content[- ]security[- ]policy|cors|frame-src|frame-ancestors|x-frame-options|hsts|strict-transport-security|referrer-policy|permissions-policy)\b|\bsandbox(ed|es)? (csp|scripts|iframes?)\b)/i,
  // An architecture decision record written or revised (not merely touched up).
  /\barchitecture decision record\b|^(revise|revises|revised|add|adds|added|new|write|create)\b.*\badrs?\b|\badrs?$/i,
];
/** Choices only a commit that is not a bug fix states: a fix "does not" do a wrong thing. */
const CHOICE_UNLESS_FIX = [
  // A fix that "always" does the right thing, or "uses X instead of" a wrong Y, repairs a bug.
  /\binstead of\b/i,
  /^(always|never) \S/i,
  /^no longer\b/i,
  /^(do not|don't|never) \w+/i,
  /^(convert|converts|converted) .+ to \S/i,
  /^fall ?back to\b/i,
];
/** A tool or practice adopted, in a ci, build or chore commit: "enable merge queue". */
const ADOPTED =
  /^(enable|enables|adopt|adopts|introduce|introduces)\b|\bconfigure\b.*\bto use\b|^use (the |an? )?(\S+ ){1,2}(addon|add-on|plugin|action|service|bot)\b/i;
/** A choice stated in the body's first paragraph, strong enough to stand for the commit. */
const BODY_CHOICE =
  /\b(switch|switched|migrate|migrated|move|moved) from \S.{0,60}? to \S|\bin favou?r of\b|^(replace|replaced) .+ with\b/i;
/** Not a choice, though it reads like one: a temporary step back, the first commit. */
const NOT_A_CHOICE =
  /\b(switch|switched|revert|reverted) back\b|^initial\b|\b(until|for now|temporarily|temporary)\b/i;
/**
 * Words about how text reads, not what the project does ("use h3 headlines instead of h1",
 * "weaker wording: broken instead of illegal"): a choice of prose is no project decision.
 */
const PROSE_ONLY =
  /\b(headlines?|headings?|wording|typos?|spelling|grammar|punctuation|whitespace|indentation|capitali[sz]ation)\b/i;
/**
 * A language construct or built-in preferred to another ("use an object spread instead of
 * Object.assign", "use optional chaining"): in a refactor or style commit that is a coding
 * convention, not a decision about the project (a library or tool adopted still is one).
 */
const LANGUAGE_IDIOM =
  /\b(object spread|spread (syntax|operator)|rest param\w*|optional chaining|nullish coalescing|destructuring|arrow functions?|template (literals?|strings?)|async\/await|for\.\.\.of|for-of loops?|list comprehensions?|f-strings?|(Object|Array|String|Promise|Math|JSON|Number|Reflect)\.\w+)/i;
const IDIOM_TYPES = new Set(["refactor", "style", "perf"]);
/** A word that is code: camelCase, `__dunder`, dotted, a call, or backticked. */
const CODE_LIKE = /[a-z][A-Z]|^__|\w\.\w|\(\)|`/;
/** Words after which the rest of a sentence is its reason. */
const REASON = /\b(because|so that|otherwise|since|as it|to avoid|which means)\b/i;
const REVERT = /^Revert\s+"(.+)"\s*$/i;
const REGRESSION =
  /\bregression\b|\b(broken|broke) (by|in|since)\b|\brestore[sd]? (the )?(previous|old|original)\b/i;
const NAMING =
  /^(rename|renames|renamed)\b.+\bto\b|\b(naming|code style|style guide|convention)\b/i;
const STYLE_TOOLS =
  /^(add|adopt|enable|enforce|configure|introduce|set up|use)\b.*\b(eslint|prettier|biome|rustfmt|black|ruff|gofmt|editorconfig|stylelint|lint rules?|formatter)\b/i;

const INFERRED_TYPES: readonly [RegExp, string][] = [
  [
    /^(add|adds|added|implement|implements|introduce|introduces|support|supports|allow|allows|new)\b/i,
    "feat",
  ],
  [/^(fix|fixes|fixed|correct|repair|resolve|resolves|handle|avoid|prevent)\b/i, "fix"],
  [/^(doc|docs|document|documents|readme)\b/i, "docs"],
  [
    /^(refactor|simplify|extract|move|moves|rename|split|clean|restructure|reorganize)\b/i,
    "refactor",
  ],
  [/^(test|tests|cover)\b/i, "test"],
  [/^(speed|faster|optimi[sz]e|perf)\b/i, "perf"],
];

/** Classifies one commit. Pure and deterministic. */
export function classifyCommit(commit: CommitText): CommitClass {
  const subject = commit.subject.trim();
  const body = commit.body;
  const conv = CONVENTIONAL.exec(subject);
  const convType = conv && TYPES.has((conv[1] as string).toLowerCase()) ? conv : null;
  let description = convType ? (convType[4] as string).trim() : subject;
  const mergePr = MERGE_PR.exec(subject);
  const prMatch = PR_SUFFIX.exec(description);
  const pr = mergePr ? Number(mergePr[1]) : prMatch ? Number(prMatch[1]) : undefined;
  if (prMatch) description = description.slice(0, prMatch.index).trim();
  const scope = convType?.[2]?.trim().toLowerCase();
  const type = convType ? normalizeType(convType[1] as string) : inferType(description);
  const breaking =
    Boolean(convType?.[3]) ||
    /^BREAKING[ -]CHANGE:/m.test(body) ||
    BREAKING_SUBJECT.test(subject) ||
    BREAKING_TICKED.test(body);
  const base: CommitClass = {
    type,
    ...(scope ? { scope } : {}),
    description,
    ...(pr !== undefined ? { pr } : {}),
    breaking,
  };

  if (
    (commit.parents ?? 1) > 1 ||
    /^Merge (branch|remote-tracking|tag|commit)\b|^Merge pull request\b/i.test(subject)
  ) {
    // A merged pull request's title is the first line of the body: read as a commit of its
    // own, a decision there counts (a title that is a bump or a fix of tests does not).
    const title = firstLine(body);
    const merged =
      title === "" || /^Merge\b/i.test(title)
        ? undefined
        : classifyCommit({ ...commit, subject: title, body: restAfterFirstLine(body), parents: 1 });
    if (merged?.decision && merged.noise === undefined) {
      return { ...base, description: title, decision: merged.decision };
    }
    return { ...base, noise: "merge" };
  }
  if (type === "revert" || REVERT.test(subject)) {
    const undone = REVERT.exec(subject)?.[1] ?? description;
    const why = reasonOf(body.replace(/^This reverts commit [0-9a-f]+\.?\s*$/im, ""));
    return { ...base, type: "revert", lesson: `Reverted "${undone}"${why ? `: ${why}` : ""}` };
  }
  if (
    type === "release" ||
    (type === "chore" && /^release\b/i.test(description)) ||
    RELEASE.some((r) => r.test(description))
  ) {
    if (!breaking) return { ...base, noise: "release" };
  }
  const bot = commit.author !== undefined && BOT.test(commit.author);
  if (
    bot ||
    ((type === "deps" ||
      (scope !== undefined && DEPENDENCY_SCOPES.test(scope) && !botSetUpOnly(commit.changes)) ||
      DEPENDENCY.some((r) => r.test(description))) &&
      // A person's bump of the runtime itself ("bump Node.js to 22") is no library upkeep.
      !RUNTIME_BUMP.test(description))
  ) {
    if (!breaking) return { ...base, noise: "dependency" };
  }
  if (CONTENT_FREE.has(plain(description)) && !breaking) return { ...base, noise: "trivial" };
  // engram's own commits of memory (`engram: init`, `engram: memory`) say nothing of the code.
  if (/^engram(\([^()]*\))?:/i.test(subject)) return { ...base, noise: "trivial" };
  // ...and a squash-merged engram pull request, titled by what it adds to memory.
  if (/^memory: (?:\+[\d,]+ |[\d,]+ (?:promoted|evicted)|no new knowledge)/.test(subject)) {
    return { ...base, noise: "trivial" };
  }

  if (IDIOM_TYPES.has(type) && LANGUAGE_IDIOM.test(description) && !breaking) {
    return { ...base, convention: description };
  }
  // One code construct for another ("Use getOwnPropertyDescriptor instead of __lookupGetter__")
  // is how the code is written: a convention.
  const swap = /^use (\S+) instead of (\S+)|^replace (\S+) with (\S+)$/i.exec(description);
  const [, a = swap?.[3] ?? "", b = swap?.[4] ?? ""] = swap ?? [];
  if (swap && CODE_LIKE.test(a) && CODE_LIKE.test(b) && !breaking) {
    return { ...base, convention: description };
  }
  const inferred = commit.decisionTrailer !== true && !NOT_A_CHOICE.test(description);
  // Read only where a decision is in question: most commits never need their paths sorted.
  let read: ReturnType<typeof readEvidence> | null = null;
  const evidence = () => {
    if (read === null) read = readEvidence(commit.changes);
    return read;
  };
  const stated = isChoice(description);
  const chosen =
    !PROSE_ONLY.test(description) &&
    (stated ||
      (type !== "fix" && CHOICE_UNLESS_FIX.some((r) => r.test(description))) ||
      (["ci", "build", "chore"].includes(type) && ADOPTED.test(description)));
  if (inferred && (type === "decision" || breaking || chosen)) {
    const { what, why } = breakingChange(body);
    const title = what ? `${description} (breaking: ${what})` : description;
    const wording =
      type === "decision"
        ? WORDING.declared
        : breaking
          ? WORDING.breaking
          : stated
            ? WORDING.stated
            : WORDING.implied;
    const confidence = weighDecision(wording, description, evidence(), type);
    const reasoned = withEvidence(withReason(title, why), commit.changes);
    return { ...base, decision: { ...reasoned, confidence } };
  }
  // A body speaks for the commit only where the commit is about the code, not its docs.
  const bodyChoice = inferred && !PROSE_TYPES.has(type) ? choiceInBody(body) : undefined;
  if (bodyChoice !== undefined) {
    const why = body.slice(body.indexOf(bodyChoice) + bodyChoice.length);
    const confidence = weighDecision(WORDING.body, bodyChoice, evidence(), type);
    return { ...base, decision: { ...withReason(bodyChoice, why), confidence } };
  }
  // Weak wording ("Remove X", "Use Y") that what the commit changed makes a decision.
  const shown =
    inferred && !PROSE_ONLY.test(description)
      ? decisionByEvidence(
          {
            description,
            type,
            conventional: convType !== null,
            recordWritten: writesDecisionRecord(commit.changes),
          },
          evidence,
        )
      : undefined;
  if (shown !== undefined) {
    const reasoned = withEvidence(withReason(description, body), commit.changes);
    return { ...base, decision: { ...reasoned, confidence: shown } };
  }
  if (REGRESSION.test(subject) || /\bregression\b/i.test(firstLine(body))) {
    const why = reasonOf(body);
    return { ...base, lesson: `Regression: ${description}${why ? `: ${why}` : ""}` };
  }
  if (
    (type === "style" || NAMING.test(description) || STYLE_TOOLS.test(description)) &&
    type !== "fix"
  ) {
    return { ...base, convention: description };
  }
  return base;
}

const PROSE_TYPES = new Set(["docs", "test", "style"]);

/**
 * A `BREAKING CHANGE:` paragraph (its lines may wrap): its first sentence says what broke, for
 * the title; the body with the rest of that paragraph in its place gives the reason.
 */
function breakingChange(body: string): { what?: string; why: string } {
  const m = /^BREAKING[ -]CHANGE:[ \t]*([^\n]*(?:\n(?![ \t]*\n)[^\n]*)*)/m.exec(body);
  if (!m) return { why: body };
  const paragraph = (m[1] as string).replace(/\s+/g, " ").trim();
  const [first = "", ...rest] = paragraph.split(/(?<=[.!?])\s+(?=[A-Z0-9"'`(])/);
  const why = `${body.slice(0, m.index)}${rest.join(" ")}${body.slice(m.index + m[0].length)}`;
  return { what: first.replace(/\.$/, ""), why: why.trim() };
}

/** The first sentence of the body's first paragraph, when it states a choice outright. */
function choiceInBody(body: string): string | undefined {
  const first =
    stripTrailerLines(body)
      .trim()
      .split(/\n[ \t]*\n/)[0] ?? "";
  const sentence =
    first
      .replace(/\s+/g, " ")
      .trim()
      .split(/(?<=[.!?])\s/)[0]
      ?.trim() ?? "";
  if (sentence === "" || /^[*#<-]/.test(first.trim())) return undefined;
  return BODY_CHOICE.test(sentence) ? sentence.replace(/\.$/, "") : undefined;
}

/** Whether a sentence states a choice. */
export function isChoice(text: string): boolean {
  return CHOICE.some((r) => r.test(text));
}

/** A reason the words leave out, from what the manifests, then the CI and deployment files, show. */
const withEvidence = <T extends { title: string; rationale?: string }>(d: T, c?: CommitChanges) =>
  withSettings(withDependencies(d, c), c);

/**
 * A decision's title and rationale: reasoning in the subject itself ("X because Y") is split
 * off; otherwise the body's sentences that give a reason, or else its first paragraph.
 */
function withReason(title: string, body: string): { title: string; rationale?: string } {
  const inline = REASON.exec(title);
  if (inline && inline.index > 8) {
    return {
      title: title.slice(0, inline.index).replace(/[\s,;:—-]+$/, ""),
      rationale: title.slice(inline.index).trim(),
    };
  }
  const rationale = reasonOf(body) ?? firstParagraph(body);
  return rationale ? { title, rationale } : { title };
}

/** The body's sentences that give a reason (up to two), or undefined. */
export function reasonOf(body: string): string | undefined {
  const text = stripTrailerLines(body).replace(/\s+/g, " ").trim();
  if (text === "") return undefined;
  const sentences = text.split(/(?<=[.!?])\s+(?=[A-Z0-9"'`(])/);
  const reasons = sentences.filter((s) => REASON.test(s)).slice(0, 2);
  return reasons.length > 0 ? clip(reasons.join(" ")) : undefined;
}

function firstParagraph(body: string): string | undefined {
  const first =
    stripTrailerLines(body)
      .split(/\n[ \t]*\n/)[0]
      ?.replace(/\s+/g, " ")
      .trim() ?? "";
  return first === "" ? undefined : clip(first);
}

function stripTrailerLines(body: string): string {
  return body
    .split("\n")
    .filter(
      (line) =>
        !/^(BREAKING[ -]CHANGE|Signed-off-by|Co-authored-by|Reviewed-by|Refs?|Closes|Fixes):/i.test(
          line,
        ),
    )
    .join("\n");
}

function firstLine(body: string): string {
  return body.trim().split("\n")[0]?.trim() ?? "";
}

function restAfterFirstLine(body: string): string {
  const lines = body.trim().split("\n");
  return lines.slice(1).join("\n");
}

function clip(text: string): string {
  // Cut on a grapheme boundary: half a surrogate pair is not text.
  return text.length > 400 ? `${cutText(text, 399).trimEnd()}…` : text;
}

function plain(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N} ]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

function normalizeType(type: string): string {
  const t = type.toLowerCase();
  return t === "doc" ? "docs" : t === "tests" ? "test" : t;
}

function inferType(description: string): string {
  for (const [pattern, type] of INFERRED_TYPES) if (pattern.test(description)) return type;
  return "other";
}
