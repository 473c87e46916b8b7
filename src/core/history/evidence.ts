/**
 * What a commit changed, as evidence for or against its message's claim to be a decision: the
 * kinds of paths it touched (docs, tests, CI, manifests, tool configuration, policy files), which
 * it added or deleted, and its size. Signals that carry across projects, unlike phrasing. Pure.
 */

import type { SettingChange } from "./settings.js";

/** One changed path, with git's `--name-status` letter (`A`, `M`, `D`, `R`, `T`...). */
export interface ChangedPath {
  status: string;
  path: string;
}

/** The dependencies a commit's manifests added and removed, names sorted (dependencies.ts). */
export interface DependencyChange {
  added: readonly string[];
  removed: readonly string[];
}

/** The changes of one commit against its first parent. */
export interface CommitChanges {
  paths: readonly ChangedPath[];
  /** How many paths changed, where `paths` lists fewer. */
  total?: number;
  /** Lines added and deleted, where known (`--numstat`). */
  added?: number;
  deleted?: number;
  /** The dependencies its manifests added and removed, where any (dependencies.ts). */
  dependencies?: DependencyChange;
  /** What its CI workflows, Dockerfiles, compose files and install settings changed (settings.ts). */
  settings?: readonly SettingChange[];
}

export type PathKind =
  | "ci"
  | "manifest"
  | "lockfile"
  | "runtime"
  | "tooling"
  | "policy"
  | "record"
  | "docs"
  | "changelog"
  | "test"
  | "locale"
  | "example"
  | "migration"
  | "source";

const CI =
  /^\.github\/(workflows|actions)\/|^\.circleci\/|^\.travis\.yml$|^\.gitlab-ci\.yml$|^azure-pipelines\.ya?ml$|^appveyor\.ya?ml$|^jenkinsfile$|^\.buildkite\//i;
const MANIFEST =
  /^(package\.json|pyproject\.toml|setup\.py|setup\.cfg|cargo\.toml|go\.mod|gemfile|[\w.-]+\.gemspec|pom\.xml|build\.gradle(\.kts)?|composer\.json|deno\.jsonc?|requirements[\w.-]*\.txt|mix\.exs|pubspec\.yaml)$/i;
const LOCKFILE =
  /^(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|cargo\.lock|go\.sum|poetry\.lock|uv\.lock|gemfile\.lock|composer\.lock|pipfile\.lock|mix\.lock|pubspec\.lock|deno\.lock)$/i;
/** Files that pin a runtime or base image: `.nvmrc`, a Dockerfile, an action's `action.yml`. */
const RUNTIME =
  /^(\.nvmrc|\.node-version|\.python-version|\.ruby-version|\.tool-versions|rust-toolchain(\.toml)?|dockerfile|[\w.-]+\.dockerfile|action\.ya?ml|\.java-version|runtime\.txt)$/i;
/**
 * What an application is deployed and configured by: compose files, an environment template, a
 * platform's manifest, a Helm chart. A default or a requirement there reaches every install.
 */
const DEPLOYMENT =
  /^(docker-compose[\w.-]*\.ya?ml|compose(\.[\w-]+)?\.ya?ml|\.env\.(example|sample|template|dist|defaults?)|procfile|app\.json|fly\.toml|render\.yaml|vercel\.json|netlify\.toml|chart\.yaml|values\.ya?ml)$/i;
/** A database schema migration: how an application's stored data changes shape. */
const MIGRATION =
  /(^|\/)(migrations?|knex_migrations|alembic|db\/migrate|schema_migrations)\/|(^|\/)schema\.prisma$/i;
/** A guide telling users what to change on upgrading: a choice that breaks or moves something. */
const UPGRADE_GUIDE =
  /(^|\/)(migrating|migration|upgrading|upgrade)([-_ ]?(guides?|notes?|to[-_]v?\d[\w.-]*))?(\/|\.(md|mdx|rst|adoc|txt)$)|(^|\/)migration-guides?\//i;
/** A root configuration dotfile of some tool (`.licensed.yml`, `.mergify.yml`, `.snyk`). */
const ROOT_DOTFILE = /^\.[\w-]+(\.(ya?ml|json|toml)|rc)$/i;
/** Configuration of a build, test, lint, format, release or dependency tool. */
const TOOLING =
  /^(\.?eslintrc[\w.]*|eslint\.config\.\w+|\.eslintignore|\.?prettierrc[\w.]*|prettier\.config\.\w+|\.prettierignore|biome\.jsonc?|tsconfig[\w.-]*\.json|jsconfig\.json|(jest|vitest|vite|rollup|webpack|babel|tsdown|tsup|esbuild|playwright|karma|ava|lint-staged|commitlint|release|postcss|tailwind|svelte|astro|nuxt|next)\.config\.\w+|\.babelrc[\w.]*|\.nycrc[\w.]*|\.c8rc[\w.]*|\.mocharc[\w.]*|\.?renovate(rc)?\.json5?|dependabot\.ya?ml|\.editorconfig|lerna\.json|turbo\.json|nx\.json|pnpm-workspace\.yaml|\.npmrc|\.yarnrc[\w.]*|\.pre-commit-config\.yaml|\.gitattributes|codecov\.ya?ml|\.codecov\.ya?ml|\.lintstagedrc[\w.]*|\.releaserc[\w.]*|release-please-config\.json|\.release-please-manifest\.json|\.size-limit[\w.]*|\.swcrc|\.flake8|tox\.ini|ruff\.toml|\.golangci\.ya?ml|clippy\.toml|rustfmt\.toml|\.rubocop\.yml|makefile|justfile|\.markdownlint[\w.-]*)$/i;
const TOOLING_DIR =
  /^(\.husky|\.changeset\/config\.json|\.codesandbox|\.devcontainer|\.yarn\/plugins)(\/|$)/i;
/** Where a project writes down how it works: security, ownership, contribution, agents. */
const POLICY =
  /^(security|codeowners|contributing|governance|code_of_conduct|agents|claude|support)(\.md|\.txt)?$|^(licen[cs]e|copying)(\.\w+)?$|^pull_request_template|^copilot-instructions\.md$/i;
const RECORD = /(^|\/)(adrs?|decisions?|rfcs?|architecture)\//i;
const TEST =
  /(^|\/)(tests?|__tests__|specs?|__snapshots__|fixtures?|e2e|testdata|test-utils?)\/|\.(test|spec)\.\w+$|_test\.(go|py|rb)$|(^|\/)test_[\w-]+\.py$/i;
const LOCALE = /(^|\/)(locales?|lang|i18n|l10n|translations?)\/|\.(po|pot)$/i;
const EXAMPLE = /(^|\/)(examples?|samples?|demos?)\//i;
const CHANGELOG =
  /(^|\/)(changelog|changes|history|news|releases?)(\.\w+)?$|^\.changeset\/(?!config\.json)/i;
const DOCS_DIR = /(^|\/)(docs?|documentation|site|website|man)\//i;
/** Prose, or a manual page (`miniflux.1`). */
const DOCS = /\.(md|mdx|markdown|rst|adoc|txt|[1-9])$/i;
/**
 * A decision record: a numbered or named file of an ADR or decisions folder, not its index or
 * template (`docs/adr/0002-username-format.md`).
 */
const DECISION_RECORD =
  /(^|\/)(adrs?|decisions?|decision-records?)\/(?!(readme|index|template)[\w.-]*$)[^/]+\.(md|mdx|rst|adoc|txt)$/i;
/**
 * A screen's source: components, pages and styles, or a web client's own folder, which change
 * how the product looks.
 */
const UI_SOURCE =
  /\.(tsx|jsx|vue|svelte|css|scss|sass|less|styl)$|(^|\/)(components?|pages|layouts|styles|templates)\/|^(web|webapp|frontend|ui)\//i;
/** A dependency bot's own configuration: how it proposes updates, not an update. */
const BOT_CONFIG = /(^|\/)(dependabot\.ya?ml|\.?renovate(rc)?(\.json5?)?|renovate\.json5?)$/i;

/** What kind of file a changed path is (the first kind that fits, most telling first). */
export function pathKind(path: string): PathKind {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (CI.test(path)) return "ci";
  if (RECORD.test(path)) return "record";
  // Where a file lives says more than its name: an example's package.json is no manifest.
  if (EXAMPLE.test(path)) return "example";
  if (TEST.test(path)) return "test";
  if (LOCALE.test(path)) return "locale";
  if (DOCS_DIR.test(path)) return "docs";
  if (MIGRATION.test(path)) return "migration";
  if (MANIFEST.test(name)) return "manifest";
  if (LOCKFILE.test(name)) return "lockfile";
  if (RUNTIME.test(name) || DEPLOYMENT.test(name)) return "runtime";
  if (TOOLING.test(name) || TOOLING_DIR.test(path) || ROOT_DOTFILE.test(path)) return "tooling";
  if (POLICY.test(name) || /^\.github\/(pull_request_template|issue_template)/i.test(path)) {
    return "policy";
  }
  if (CHANGELOG.test(path)) return "changelog";
  if (DOCS.test(path)) return "docs";
  return "source";
}

/** The evidence of one commit's changes. */
export interface Evidence {
  kinds: ReadonlySet<PathKind>;
  /** Paths changed (all of them, where only some are listed). */
  files: number;
  /** Only prose changed: docs, changelog, examples, translations. */
  proseOnly: boolean;
  /** Only tests (and prose) changed. */
  testsOnly: boolean;
  /** Only how the project is built, tested, released or run changed: no source, no tests. */
  toolingOnly: boolean;
  /** A tool's configuration or a policy file added or deleted (not merely renamed). */
  setUpOrDropped: boolean;
  /** The dependency manifest changed. */
  manifest: boolean;
  /** Source changed together with its documentation: a public interface, as users read it. */
  documentedInterface: boolean;
  /** An upgrade or migration guide changed: users are told what to change. */
  upgradeGuide: boolean;
  /** A CI workflow added or one deleted (not renamed): a check or a job adopted or dropped. */
  workflowSetUpOrDropped: boolean;
  /**
   * Source files deleted and the change mostly deletion: something taken out, not reworked
   * (where the line counts are known).
   */
  removal: boolean;
  /** Only how screens look changed: UI source (and its tests, prose, translations). */
  uiOnly: boolean;
  /** Lines changed, where known. */
  lines?: number;
}

const PROSE: ReadonlySet<PathKind> = new Set(["docs", "changelog", "example", "locale"]);
// Not `runtime`: an action's action.yml or an app's Dockerfile is also what users run.
const TOOLS: ReadonlySet<PathKind> = new Set(["ci", "manifest", "lockfile", "tooling", "policy"]);

const UI_ONLY: ReadonlySet<PathKind> = new Set([...PROSE, "source", "test"]);

/** Reads what a commit changed. Undefined when nothing is known of it (no paths). */
export function readEvidence(changes: CommitChanges | undefined): Evidence | undefined {
  if (changes === undefined || changes.paths.length === 0) return undefined;
  const kinds = new Set<PathKind>();
  const added = new Set<string>();
  const deleted = new Set<string>();
  const workflows = { A: 0, D: 0 };
  let upgradeGuide = false;
  let sourceDeleted = false;
  let uiSource = false;
  let otherSource = false;
  for (const { status, path } of changes.paths) {
    const kind = pathKind(path);
    kinds.add(kind);
    if ((status === "A" || status === "D") && (kind === "tooling" || kind === "policy")) {
      (status === "A" ? added : deleted).add(stem(path));
    }
    if ((status === "A" || status === "D") && /^\.github\/workflows\//.test(path)) {
      workflows[status]++;
    }
    if (UPGRADE_GUIDE.test(path)) upgradeGuide = true;
    if (status === "D" && kind === "source") sourceDeleted = true;
    // A framework's API routes live beside its pages (`src/pages/api/`): they serve, not show.
    if (kind === "source") {
      if (UI_SOURCE.test(path) && !/(^|\/)api\//i.test(path)) uiSource = true;
      else otherSource = true;
    }
  }
  // `eslint.config.mjs` deleted and `eslint.config.js` added is a rename, not a tool adopted.
  const setUpOrDropped =
    [...added].some((n) => !deleted.has(n)) || [...deleted].some((n) => !added.has(n));
  const every = (allowed: ReadonlySet<PathKind>) => [...kinds].every((k) => allowed.has(k));
  const lines =
    changes.added !== undefined && changes.deleted !== undefined
      ? changes.added + changes.deleted
      : undefined;
  return {
    kinds,
    files: Math.max(changes.total ?? 0, changes.paths.length),
    proseOnly: every(PROSE),
    testsOnly: kinds.has("test") && every(new Set([...PROSE, "test"])),
    toolingOnly: every(new Set([...TOOLS, "docs", "changelog"])) && hasAny(kinds, TOOLS),
    setUpOrDropped,
    manifest: kinds.has("manifest"),
    documentedInterface: kinds.has("source") && kinds.has("docs"),
    upgradeGuide,
    // One workflow deleted and another added is a rename or a rework, not a job adopted.
    workflowSetUpOrDropped: workflows.A > 0 !== workflows.D > 0,
    removal:
      sourceDeleted &&
      changes.added !== undefined &&
      changes.deleted !== undefined &&
      changes.deleted >= 2 * changes.added,
    // Unknown paths beyond those listed may be anything: only a full list proves UI alone.
    uiOnly:
      uiSource && !otherSource && (changes.total ?? 0) <= changes.paths.length && every(UI_ONLY),
    ...(lines !== undefined ? { lines } : {}),
  };
}

/** A file's name up to its first dot after the first character: `eslint.config.mjs` -> `eslint`. */
function stem(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const dot = name.indexOf(".", 1);
  return dot === -1 ? name : name.slice(0, dot);
}

function hasAny(kinds: ReadonlySet<PathKind>, of: ReadonlySet<PathKind>): boolean {
  for (const k of kinds) if (of.has(k)) return true;
  return false;
}

/**
 * A decision record added: the project wrote a choice down as one. Read from the paths alone,
 * without sorting them into kinds: it is asked of every commit a decision is in question for.
 */
export function writesDecisionRecord(changes: CommitChanges | undefined): boolean {
  return (changes?.paths ?? []).some(
    ({ status, path }) => status === "A" && DECISION_RECORD.test(path),
  );
}

/**
 * Only a dependency bot's configuration changed: a person's `chore(dependabot): group updates`
 * sets how updates come, and is no dependency update itself.
 */
export function botSetUpOnly(changes: CommitChanges | undefined): boolean {
  return (
    changes !== undefined &&
    changes.paths.length > 0 &&
    changes.paths.every(({ path }) => BOT_CONFIG.test(path))
  );
}
