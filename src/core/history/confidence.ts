/**
 * How sure the import is that a commit records a decision: the strength of its wording, weighed
 * against what it changed (evidence.ts). A choice stated only in docs or tests loses weight; a
 * change of tooling, CI, manifests, policy files or a documented interface gains it. Where the
 * wording is weak ("Remove X", "Use Y", "Set Z"), what changed can make a decision of it alone.
 * Pure.
 */
import type { Evidence, PathKind } from "./evidence.js";

/** The line the import uses: a decision below it is proposed, not remembered. */
export const DECISION_LINE = 0.6;

/** How strongly the message alone states a choice. */
export const WORDING = {
  /** `decision:` as the commit's type. */
  declared: 1,
  /** A breaking change. */
  breaking: 0.9,
  /** A choice stated outright: "switch to", "by default", "require", "in favour of". */
  stated: 0.8,
  /** A choice implied: "instead of", "no longer", "do not", "enable". */
  implied: 0.7,
  /** A choice in the body's first sentence only. */
  body: 0.65,
} as const;

/** Repairs and upkeep, whether a conventional prefix says so or the first word does. */
const REPAIR_TYPES = new Set(["fix", "docs", "test", "style", "perf", "revert"]);
/** A feature or refactor by its author's own conventional prefix (not a guess from "add"). */
const DECLARED_NOT_A_CHOICE = new Set(["feat", "refactor"]);

/**
 * A decision's confidence: its wording's weight, moved by the evidence of its changes. `type`
 * is the commit's type: its conventional prefix, else the one its first word implies.
 */
export function weighDecision(
  wording: number,
  description: string,
  evidence?: Evidence,
  type?: string,
): number {
  let weight = wording;
  const silent = evidence !== undefined && isSilent(evidence);
  // A choice read in a repair's subject ("Fix it not using X by default") is mostly the bug's;
  // so is one in a fix or a feature that changed only code and tests, nothing users are told
  // of ("feat: add --x, off by default" is how the new thing is built, not a choice made).
  if (
    wording < WORDING.breaking &&
    (/^(fix|fixes|fixed|fixing)\b/i.test(description) ||
      (type !== undefined &&
        CHANGES_OF_BEHAVIOUR.has(type) &&
        silent &&
        // Who may connect, sign in or change what is a policy wherever it is set.
        !ACCESS_POLICY.test(description)))
  ) {
    weight -= 0.25;
  }
  // "X should not Y", "Change X to Y", "Stop doing Z" over code alone is how a bug is reported
  // or code reworked, not a choice made: one stated so reaches what users read or what the
  // project is set up by (a CI job "should analyze lib, not dist"). A default is a choice.
  if (silent && CARRIED_ONLY.test(description) && !/\bdefaults?\b/i.test(description)) {
    weight -= 0.25;
  }
  // "Do not X", "Always Y" over code alone is mostly what a repair stops or starts doing: with
  // nothing the choice carries to (docs, release notes, configuration), it is proposed.
  if (wording === WORDING.implied && silent && UNCARRIED.test(description)) weight -= 0.15;
  // "refactor: use X instead of Y" over code alone is how the code is written, by its author's
  // own word no change of behaviour: a convention, not a choice users or the project live with.
  if (type === "refactor" && silent && CONSTRUCT_SWAP.test(description)) weight -= 0.25;
  // A choice that changes only how screens look ("replace the skeleton with a spinner") is UI
  // work, a feature by the labelling rule: proposed, not remembered. A default set there is
  // still one every user meets.
  if (evidence?.uiOnly && wording < WORDING.breaking && !/\bdefaults?\b/i.test(description)) {
    weight -= 0.25;
  }
  // Documentation, tests or formatting by the author's own word: a choice written down there
  // is one made elsewhere, unless the commit also changed what the project is set up by.
  if (
    type !== undefined &&
    UPKEEP_TYPES.has(type) &&
    wording < WORDING.breaking &&
    !(evidence !== undefined && supports(evidence))
  ) {
    weight -= 0.2;
  }
  if (evidence !== undefined && wording < WORDING.declared) {
    // Stated only in docs or tests: an implied choice falls below the line, a stated one not.
    if (evidence.proseOnly) weight -= 0.2;
    else if (evidence.testsOnly) weight -= 0.15;
    else if (supports(evidence)) weight += 0.1;
  }
  return round(Math.min(1, Math.max(0, weight)));
}

const UPKEEP_TYPES = new Set(["docs", "test", "style"]);
/** A repair, a speed-up or a feature, by its author's prefix or first word (Fix, Add, Avoid...). */
const CHANGES_OF_BEHAVIOUR = new Set(["fix", "perf", "feat"]);

const CARRIED_ONLY =
  /\bshould\b.*\bnot\b|\bshouldn't\b|^(change|changes|changed) .+ to\b|^stop (\w+ly )?\w+ing\b/i;
/** What an access policy governs: permissions, sign-in, cross-site requests, transport. */
const ACCESS_POLICY =
  /\b(access|permissions?|csrf|cors|csp|sandbox(ed|es)?|oauth2?|oidc|authentication|authori[sz]ation|sign-?in|log-?in|tls)\b/i;
const CONSTRUCT_SWAP = /^(use|uses|using|replace|replaces|replaced)\b(?!.*\bdefaults?\b)/i;
/** Implied choices that name no alternative: what code does or stops doing. */
const UNCARRIED = /^(do not|don't|never|always|convert|converts|converted|fall ?back)\b/i;

/**
 * Only code and its tests changed: nothing users are told of (docs, release notes), nothing the
 * project is set up or run by (CI, manifests, configuration, runtime pins, policy).
 */
function isSilent(evidence: Evidence): boolean {
  for (const kind of evidence.kinds) if (kind !== "source" && kind !== "test") return false;
  return evidence.kinds.has("source");
}

/** Whether the changes are the kind a decision makes: tooling, CI, manifests, policy, records. */
function supports(evidence: Evidence): boolean {
  if (evidence.setUpOrDropped || evidence.workflowSetUpOrDropped || evidence.upgradeGuide) {
    return true;
  }
  for (const kind of evidence.kinds) if (SUPPORTING.has(kind)) return true;
  return false;
}

const SUPPORTING: ReadonlySet<PathKind> = new Set([
  "ci",
  "manifest",
  "runtime",
  "tooling",
  "policy",
  "record",
  "migration",
]);

const DROPPED =
  /^(remove|removes|removed|drop|drops|dropped|delete|deletes|deleted|disable|disables|disabled)\b/i;
const ADOPTED = /^(use|uses|adopt|adopts|enable|enables)\b/i;
/** Tidying up, not choosing: what goes was unused, stray or obsolete. */
const CLEANUP =
  /\b(unneeded|unused|unnecessary|stray|obsolete|dead|leftover|redundant|outdated|duplicated?)\b/i;
const ADDED = /^(add|adds|added|introduce|introduces|set up|setup)\b/i;
const SET =
  /^(set|sets|restrict|restricts|limit|limits|only|exclude|excludes|pin|pins)\b|\b(only|exclude|excluding|restrict\w*|cooldown|cadence|grouping|permissions?)\b/i;
const PLATFORMS =
  /^(drop|drops|dropped|remove|removes|removed|replace|replaces|replaced|stop|stops)\b.*\b(windows|macos|linux|node(\.js)? ?v?\d+|lts|python ?\d[\d.]*|matrix|arm(v\d|32|64)?|i386|x86|32-bit)\b/i;
const PLATFORM_ADDED =
  /^(run|runs|test|tests|build|builds|add|adds|added)\b.*\bon (windows|macos|linux|freebsd|arm\w*)\b|^(add|adds|added|build|builds|publish|publishes)\b.*(\b(linux|windows|darwin|freebsd)\/[\w-]+|\b(riscv64|arm64|armv[67]|aarch64|ppc64le|s390x)\b).*\b(builds?|images?|binar(y|ies)|packages?)\b/i;
/** The runtime or base image a project runs on, moved to another version. */
export const RUNTIME_BUMP =
  /^(bump|bumps|bumped|update|updates|updated|upgrade|upgrades|upgraded|raise|raises|raised)\b.*(?<![\w@/.-])(node(\.js|js)?|python|ruby|golang|java|jdk|deno|bun|php|dotnet|alpine|debian|ubuntu|base image)(?![\w/-]).*\bto\b/i;
const RENAMED = /^(rename|renames|renamed)\b.+\bto\b/i;
/** An environment variable, as users set it: `DATA_DIR`, `APP_DB_TYPE`. */
const ENV_NAME = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b/;
const CODE_NAME = new RegExp(
  `\`[^\`]+\`|(^|\\s)--?[a-z][\\w-]+|\\b[a-z]+[A-Z]\\w*|${ENV_NAME.source}`,
);
const MADE =
  /^(make|makes|made)\b.*\b(opt-in|opt-out|(dev|peer|optional)?dependency|devdependency|required|mandatory)\b/i;
const WEAK_CHOICES = [
  DROPPED,
  ADOPTED,
  ADDED,
  SET,
  PLATFORMS,
  PLATFORM_ADDED,
  RENAMED,
  MADE,
  RUNTIME_BUMP,
];
/** Below the line: a candidate the import proposes rather than remembers. */
const PROPOSED = 0.55;

/**
 * A decision the changes show though the wording alone would not: something removed or
 * disabled that a project sets up (tooling, CI, a policy file, a documented or released
 * interface); a tool, library or workflow adopted; a policy set in configuration; a named
 * interface renamed; a dependency or option made opt-in, opt-out or a dev dependency. The confidence,
 * or undefined.
 */
export function decisionByEvidence(
  commit: {
    description: string;
    type: string;
    conventional: boolean;
    /** A decision record added (evidence.ts, `writesDecisionRecord`). */
    recordWritten?: boolean;
  },
  evidenceOf: Evidence | undefined | (() => Evidence | undefined),
): number | undefined {
  const { description, type } = commit;
  // What the changes prove whatever the commit's type: a decision record written, or a named
  // dependency taken out of the manifest ("fix: remove utils-merge dependency"). A library
  // switched by the manifests alone was tried and did not carry (the corpus README's ninth
  // round): it is a decision's reason, not a decision.
  if (commit.recordWritten) return WORDING.stated;
  if (
    DEPENDENCY_DROPPED.test(description) &&
    !CLEANUP.test(description) &&
    evidenceFrom(evidenceOf)?.manifest
  ) {
    return WORDING.implied;
  }
  // A feature that takes something out ("feat: remove the legacy importer") is a removal; one
  // that builds for another platform ("feat: add linux/riscv64 build") is a platform supported.
  const removing =
    type === "feat" && (DROPPED.test(description) || PLATFORM_ADDED.test(description));
  if (
    REPAIR_TYPES.has(type) ||
    (commit.conventional && DECLARED_NOT_A_CHOICE.has(type) && !removing)
  ) {
    return undefined;
  }
  // The wording first: the paths are read only for a commit that could be such a decision.
  if (!WEAK_CHOICES.some((r) => r.test(description)) || CLEANUP.test(description)) {
    return undefined;
  }
  const evidence = evidenceFrom(evidenceOf);
  if (evidence === undefined || evidence.proseOnly || evidence.testsOnly) return undefined;
  const k = evidence.kinds;
  // A change users are told of: documented beside the source, or in a release note with it.
  const announced = evidence.documentedInterface || (k.has("changelog") && k.has("source"));
  // Only what an install is deployed or run by (a Dockerfile, a compose file, an action's
  // metadata, an environment template), not the code: a choice for every install.
  const deployed = k.has("runtime") && !k.has("source") && !k.has("test");
  // The runtime moved where what users run pins it (an action's metadata, a Dockerfile,
  // `.nvmrc`) or the manifest does (`engines`): not only the versions CI tests on.
  if (RUNTIME_BUMP.test(description) && (k.has("runtime") || evidence.manifest)) {
    return WORDING.implied;
  }
  if (DROPPED.test(description)) {
    // A CI step or a dependency dropped counts; a Makefile target alone does not.
    const dropped = evidence.toolingOnly && (k.has("ci") || evidence.manifest);
    // Something users set (an environment variable), or whole source files taken out with
    // their stored data or their upgrade note: a part of the product removed.
    const removed =
      (evidence.removal && (announced || k.has("migration") || k.has("locale"))) ||
      (ENV_NAME.test(description) && (k.has("source") || k.has("runtime")));
    if (
      evidence.setUpOrDropped ||
      evidence.workflowSetUpOrDropped ||
      dropped ||
      announced ||
      deployed ||
      removed
    ) {
      return WORDING.implied;
    }
    return undefined;
  }
  // A dependency installed: the manifest and its lock file changed together.
  const installed = evidence.manifest && k.has("lockfile");
  if (ADOPTED.test(description)) {
    const configured = evidence.manifest || evidence.setUpOrDropped;
    if ((evidence.toolingOnly && configured) || deployed) return WORDING.implied;
    // A library installed and announced in the release notes, or a change users must adapt
    // to (an upgrade guide): adopted for the project, not one module.
    if (announced && (installed || evidence.upgradeGuide)) return WORDING.implied;
    // Only a CI step, or a library beside source changes: proposed, not remembered.
    if (evidence.toolingOnly || installed) return PROPOSED;
    return undefined;
  }
  // A platform or runtime the project stops testing on, in its CI; or one it starts testing or
  // building for; or one its images stop being built for.
  if (
    (PLATFORMS.test(description) || PLATFORM_ADDED.test(description)) &&
    (k.has("ci") || deployed)
  ) {
    return WORDING.implied;
  }
  if (ADDED.test(description)) {
    if (evidence.toolingOnly && installed) return WORDING.body;
    // A tool set up with a check of its own in CI: adopted, not tried.
    if (evidence.setUpOrDropped && evidence.workflowSetUpOrDropped) return WORDING.body;
    if (evidence.setUpOrDropped) return PROPOSED;
    return undefined;
  }
  if (SET.test(description) && (evidence.toolingOnly || deployed)) return WORDING.implied;
  // A named interface renamed where users are told of it, or a flag or an environment
  // variable (what users type or set) renamed.
  const named = CODE_NAME.exec(description)?.[0];
  const typed = named !== undefined && (/^\s*--?[a-z]/.test(named) || ENV_NAME.test(named));
  if (RENAMED.test(description) && named && (announced || typed)) {
    return WORDING.implied;
  }
  if (MADE.test(description) && (k.has("source") || evidence.manifest)) return WORDING.implied;
  return undefined;
}

const DEPENDENCY_DROPPED =
  /^(remove|removes|removed|drop|drops|dropped|replace|replaces|replaced)\b.*\b(dependency|dependencies|package)\b/i;

function evidenceFrom(
  evidenceOf: Evidence | undefined | (() => Evidence | undefined),
): Evidence | undefined {
  return typeof evidenceOf === "function" ? evidenceOf() : evidenceOf;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
