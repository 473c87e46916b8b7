/**
 * What a commit changed in how its project is built, released and run, read from the text of
 * its CI workflows, Dockerfiles, compose files, environment templates and `.npmrc` before and
 * after: actions pinned, runtimes dropped from CI, how it publishes, what its jobs may do, the
 * base image, the settings an install takes. An application's choices live there, under
 * messages such as `Updated workflow.` that say nothing. Pure.
 */

/** The kinds of setting change read, each a fact about the diff, none a phrasing. */
export type SettingChange =
  /** An action's `uses:` moved from a tag or branch to a full commit SHA. */
  | "actions-pinned"
  /** A runtime version a CI workflow ran on is gone from it (support ended). */
  | "runtime-dropped"
  /** How a workflow publishes changed: registries, image tags or platforms, provenance. */
  | "publishing-changed"
  /** What a workflow's jobs may do changed: `permissions`, persisted credentials. */
  | "permissions-changed"
  /** A job now runs only in the project's own repository or not on forks. */
  | "runs-guarded"
  /** An action no changed workflow used before is used now. */
  | "ci-action-adopted"
  /** An action a changed workflow used is used by none now. */
  | "ci-action-dropped"
  /** A Dockerfile builds from another image (not another tag of the same one). */
  | "base-image-switched"
  /** A setting (an environment variable) an install takes was added. */
  | "setting-added"
  /** A setting an install took was removed. */
  | "setting-removed"
  /** A line of `.npmrc` set: how dependencies are installed or published. */
  | "install-policy";

/** The files whose text is read for setting changes. */
const WORKFLOW = /^\.github\/workflows\/[^/]+\.ya?ml$/i;
const DOCKERFILE = /(^|\/)(dockerfile|[\w.-]+\.dockerfile|dockerfile\.[\w.-]+)$/i;
const COMPOSE = /(^|\/)(docker-compose[\w.-]*|compose(\.[\w-]+)?)\.ya?ml$/i;
const ENV_TEMPLATE = /(^|\/)\.env\.(example|sample|template|dist|defaults?)$/i;
const NPMRC = /^\.npmrc$/i;

/** Whether the import reads this path's text for setting changes. */
export function readsSettings(path: string): boolean {
  // Examples' and tests' files describe no install of the project itself.
  if (/(^|\/)(examples?|samples?|demos?|tests?|fixtures?|testdata)\//i.test(path)) return false;
  return [WORKFLOW, DOCKERFILE, COMPOSE, ENV_TEMPLATE, NPMRC].some((re) => re.test(path));
}

/** One file a commit changed: its text before and after (undefined where it did not exist). */
export interface FileTexts {
  path: string;
  before?: string;
  after?: string;
}

/**
 * The setting changes of one commit, sorted; undefined where there are none. A file added or
 * deleted whole is compared with nothing on the other side.
 */
export function settingChanges(files: readonly FileTexts[]): readonly SettingChange[] | undefined {
  const out = new Set<SettingChange>();
  const usedBefore = new Set<string>();
  const usedAfter = new Set<string>();
  for (const { path, before = "", after = "" } of files) {
    if (WORKFLOW.test(path)) {
      workflowChanges(before, after, out);
      for (const a of actionsUsed(before)) usedBefore.add(a);
      for (const a of actionsUsed(after)) usedAfter.add(a);
    } else if (DOCKERFILE.test(path)) {
      const was = baseImages(before);
      const is = baseImages(after);
      if (was.size > 0 && is.size > 0 && [...is].some((i) => !was.has(i))) {
        out.add("base-image-switched");
      }
    } else if (COMPOSE.test(path) || ENV_TEMPLATE.test(path)) {
      const was = settingNames(before, ENV_TEMPLATE.test(path));
      const is = settingNames(after, ENV_TEMPLATE.test(path));
      // A compose or template file new or gone whole is a deployment set up, read elsewhere.
      if (before !== "" && after !== "") {
        if ([...is].some((n) => !was.has(n))) out.add("setting-added");
        if ([...was].some((n) => !is.has(n))) out.add("setting-removed");
      }
    } else if (NPMRC.test(path)) {
      const was = new Set(npmrcSettings(before));
      if (npmrcSettings(after).some((s) => !was.has(s))) out.add("install-policy");
    }
  }
  for (const a of usedAfter) if (!usedBefore.has(a)) out.add("ci-action-adopted");
  for (const a of usedBefore) if (!usedAfter.has(a)) out.add("ci-action-dropped");
  return out.size === 0 ? undefined : [...out].sort();
}

/** Lines present on one side and not the other, trimmed, comments and blanks left out. */
function changedLines(before: string, after: string): { added: string[]; removed: string[] } {
  const count = (text: string) => {
    const m = new Map<string, number>();
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      m.set(line, (m.get(line) ?? 0) + 1);
    }
    return m;
  };
  const was = count(before);
  const is = count(after);
  const added: string[] = [];
  const removed: string[] = [];
  for (const [line, n] of is) if (n > (was.get(line) ?? 0)) added.push(line);
  for (const [line, n] of was) if (n > (is.get(line) ?? 0)) removed.push(line);
  return { added, removed };
}

const USES = /^-?\s*uses:\s*['"]?([\w.-]+\/[\w./-]+)@([\w./-]+)/;
const FULL_SHA = /^[0-9a-f]{40}$/;
const PUBLISHING =
  /docker\/(build-push|metadata|login)-action|\bplatforms:|\bimages?:|ghcr\.io|docker\.io|quay\.io|\bregistry\b|npm publish|--provenance|id-token:\s*write|goreleaser|\bpush:\s*(true|false|\$)/i;
const PERMISSIONS =
  /^(permissions:|(contents|packages|id-token|pull-requests|issues|actions|checks|deployments|statuses|security-events|attestations):\s*(read|write|none)\b|persist-credentials:)/i;
const GUARD = /^-?\s*if:.*(github\.repository\b|github\.repository_owner|\.fork\b)/i;

function workflowChanges(before: string, after: string, out: Set<SettingChange>): void {
  const { added, removed } = changedLines(before, after);
  const refOf = new Map<string, string>();
  for (const line of removed) {
    const m = USES.exec(line);
    if (m) refOf.set(m[1] as string, m[2] as string);
  }
  for (const line of added) {
    const m = USES.exec(line);
    if (m && FULL_SHA.test(m[2] as string)) {
      const was = refOf.get(m[1] as string);
      if (was !== undefined && !FULL_SHA.test(was)) out.add("actions-pinned");
    }
  }
  // Both sides exist: a workflow new or gone whole says it through its path.
  if (before !== "" && after !== "") {
    const changed = [...added, ...removed];
    if (changed.some((l) => PUBLISHING.test(l))) out.add("publishing-changed");
    if (changed.some((l) => PERMISSIONS.test(l))) out.add("permissions-changed");
    const was = runtimeVersions(before);
    const is = runtimeVersions(after);
    if ([...was].some((v) => !is.has(v)) && is.size > 0) out.add("runtime-dropped");
  }
  if (added.some((l) => GUARD.test(l)) && !removed.some((l) => GUARD.test(l))) {
    out.add("runs-guarded");
  }
}

/** The actions a workflow uses, by name (`actions/checkout`), local ones left out. */
function actionsUsed(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.split("\n")) {
    const m = USES.exec(raw.trim());
    if (m && !(m[1] as string).startsWith(".")) out.add((m[1] as string).toLowerCase());
  }
  return out;
}

const RUNTIME_KEY =
  /^-?\s*(node|node-version|node_version|go|go-version|python|python-version|ruby|ruby-version|java|java-version|deno|deno-version|bun|bun-version)\s*:\s*(.*)$/i;

/**
 * The runtime versions a workflow names: a key's inline value or list (`node-version: [18,
 * 20]`), or the block list under it (`- 18`). A version read from a variable is no version.
 */
function runtimeVersions(text: string): Set<string> {
  const out = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const m = RUNTIME_KEY.exec(line.trim());
    if (!m) continue;
    const key = (m[1] as string).toLowerCase().replace(/[-_]version$/, "");
    const value = (m[2] as string).replace(/\s+#.*$/, "").trim();
    if (value !== "") {
      for (const v of value.replace(/^\[|\]$/g, "").split(",")) addVersion(out, key, v);
      continue;
    }
    const indent = line.search(/\S/);
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j] as string;
      if (next.trim() === "") continue;
      if (next.search(/\S/) <= indent && !next.trim().startsWith("-")) break;
      const item = /^\s*-\s*(.+)$/.exec(next);
      if (!item) break;
      addVersion(out, key, item[1] as string);
    }
  }
  return out;
}

function addVersion(out: Set<string>, key: string, raw: string): void {
  const v = raw
    .replace(/\s+#.*$/, "")
    .trim()
    .replace(/^['"]|['"]$/g, "");
  if (/^(lts\/\*|latest|\*|current|node|stable)$/i.test(v) || v.includes("$")) return;
  if (/^v?\d+(\.[\dx*]+)*(\.x)?$/i.test(v) || /^lts\/[\w-]+$/i.test(v)) out.add(`${key}@${v}`);
}

/** A Dockerfile's base images by name, without tag or digest (`node`, `golang`). */
function baseImages(text: string): Set<string> {
  const out = new Set<string>();
  const stages = new Set<string>();
  for (const raw of text.split("\n")) {
    const m = /^\s*from\s+(?:--platform=\S+\s+)?(\S+)(?:\s+as\s+(\S+))?/i.exec(raw);
    if (!m) continue;
    const image = (m[1] as string).toLowerCase();
    if (m[2] !== undefined) stages.add((m[2] as string).toLowerCase());
    // A stage built on an earlier one, or an image named by a build argument, names no image.
    if (stages.has(image) && m[2]?.toLowerCase() !== image) continue;
    if (image.includes("$")) continue;
    out.add(image.replace(/@sha256:[0-9a-f]+$/, "").replace(/:[\w.-]+$/, ""));
  }
  return out;
}

/** The environment variables a compose file or an environment template sets, by name. */
function settingNames(text: string, template: boolean): Set<string> {
  const out = new Set<string>();
  const pattern = template
    ? /^\s*#?\s*(?:export\s+)?([A-Z][A-Z0-9_]{2,})\s*=/
    : /^\s*-?\s*([A-Z][A-Z0-9_]{2,})\s*[=:]/;
  for (const raw of text.split("\n")) {
    const m = pattern.exec(raw);
    if (m) out.add(m[1] as string);
  }
  return out;
}

/** `.npmrc`'s settings as `key=value`, comments left out. */
function npmrcSettings(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^[#;]/.test(l) && l.includes("="))
    .map((l) => l.replace(/\s*=\s*/, "="));
}

/** How each setting change reads as a reason. */
const REASONS: Record<SettingChange, string> = {
  "actions-pinned": "CI actions pinned to commit SHAs",
  "runtime-dropped": "a runtime version dropped from CI",
  "publishing-changed": "how CI publishes changed",
  "permissions-changed": "what CI jobs may do changed",
  "runs-guarded": "a CI job run only in the project's own repository",
  "ci-action-adopted": "an action adopted in CI",
  "ci-action-dropped": "an action dropped from CI",
  "base-image-switched": "the base image switched",
  "setting-added": "a setting added to the deployment",
  "setting-removed": "a setting removed from the deployment",
  "install-policy": "an .npmrc setting set",
};

/**
 * A decision the commit's words and manifests leave unexplained, given what its CI and
 * deployment files show ("CI actions pinned to commit SHAs"). The settings alone make no
 * decision: read that way they did not carry to the held-out histories (the corpus README's
 * tenth round).
 */
export function withSettings<T extends { title: string; rationale?: string }>(
  decision: T,
  changes: { settings?: readonly SettingChange[] } | undefined,
): T {
  const settings = changes?.settings;
  if (decision.rationale || settings === undefined || settings.length === 0) return decision;
  return { ...decision, rationale: settings.map((s) => REASONS[s]).join("; ") };
}
