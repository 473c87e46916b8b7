import { UsageError } from "../errors.js";
import {
  type Command,
  type CommandOutput,
  type OptionSpecs,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";
import { EXIT } from "./main.js";

// Each `run` imports its work (git, the Director) on demand: see director-commands.ts.

function requiredOption(args: ParsedArgs, name: string, usage: string): string {
  const value = stringOption(args, name);
  if (value === undefined || value === "") {
    throw new UsageError(`--${name} is required`, { usage: `usage: ${usage}\n` });
  }
  return value;
}

const GUARD_USAGE =
  "director guard --base REF --head REF [--head-branch NAME] [--head-repo OWNER/NAME --base-repo OWNER/NAME] [--repo DIR] [--config FILE] [--json]";

const guard: Command = {
  name: "guard",
  summary:
    "Pull-request checks on local refs: memory at --head verifies, only engram/* branches change memory, an engram branch is not stale against --base.",
  usage: GUARD_USAGE,
  options: {
    base: { type: "string", value: "REF", description: "the branch the PR merges into (main)" },
    head: { type: "string", value: "REF", description: "the PR's head commit or branch" },
    "head-branch": {
      type: "string",
      value: "NAME",
      description: "the PR's head branch name, when --head is not a branch (engram/* = Director)",
    },
    "author-branch": { type: "string", value: "NAME", description: "same as --head-branch" },
    "head-repo": {
      type: "string",
      value: "OWNER/NAME",
      description:
        "the repository the PR comes from; another than --base-repo (a fork) is never the Director's (Actions: read from the event)",
    },
    "base-repo": {
      type: "string",
      value: "OWNER/NAME",
      description: "the repository the PR targets (Actions: read from the event)",
    },
  },
  async run(args) {
    const base = requiredOption(args, "base", GUARD_USAGE);
    const head = requiredOption(args, "head", GUARD_USAGE);
    const [{ guardRefs, reportToGitHub }, { formatGuardFinding }] = await Promise.all([
      import("../director/guard.js"),
      import("../core/checks/guard.js"),
    ]);
    const r = await guardRefs({
      repo: stringOption(args, "repo"),
      config: stringOption(args, "config"),
      base,
      head,
      headBranch: stringOption(args, "head-branch") ?? stringOption(args, "author-branch"),
      headRepo: stringOption(args, "head-repo"),
      baseRepo: stringOption(args, "base-repo"),
    });
    const annotations = reportToGitHub(r, { base, head });
    // Workflow commands are read from either stream: keep stdout pure JSON with --json.
    if (args.values.json && annotations.length > 0) {
      process.stderr.write(`${annotations.join("\n")}\n`);
    }
    const who = `${r.director_branch ? "Director" : "worker"} branch ${r.head_branch ?? "(unnamed)"} at ${r.head.slice(0, 12)} against ${base}`;
    const lines =
      annotations.length > 0
        ? annotations
        : [
            ...r.findings.map((f) => formatGuardFinding(f)),
            ...r.warnings.map((w) => `warning: ${formatGuardFinding(w)}`),
          ];
    lines.push(r.ok ? `ok: ${who}` : `guard: ${r.findings.length} finding(s) for the ${who}`);
    return {
      json: r,
      text: `${lines.join("\n")}\n`,
      exitCode: r.ok ? EXIT.ok : EXIT.findings,
    };
  },
};

const restore: Command = {
  name: "restore",
  summary:
    "Bring an evicted engram back from git history into memory/ and the catalog (a new catalog version), and regenerate MEMORY.md.",
  usage: "director restore ENGRAM_ID [--repo DIR] [--config FILE] [--json]",
  options: {},
  positionals: [1, 1],
  async run(args) {
    const [{ openContext }, { restoreEngram }, { tierDir }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../director/restore.js"),
      import("../core/model/paths.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const r = await restoreEngram(ctx, args.positionals[0] as string);
    const lines = r.restored
      ? [
          `restored ${r.path} from commit ${r.commit?.slice(0, 12)}`,
          `catalog version ${r.catalog_version} ${r.catalog_hash}`,
        ]
      : [`${r.engram_id} is already in the catalog (${r.path}); nothing restored`];
    for (const o of r.over_budget) {
      const over = [
        ...(o.files > o.max_files
          ? [`${o.files} files > ${o.scope}_max_files ${o.max_files}`]
          : []),
        ...(o.bytes > o.max_bytes
          ? [`${o.bytes} bytes > ${o.scope}_max_total_bytes ${o.max_bytes}`]
          : []),
      ];
      lines.push(
        `warning: ${tierDir(o.scope)} is over its budget (${over.join(", ")}): the next director run evicts oldest-first again unless [memory] budgets are raised`,
      );
    }
    return { json: r, text: `${lines.join("\n")}\n` };
  },
};

/** `director guard` and `director restore`. */
export const GIT_COMMANDS: readonly Command[] = [guard, restore];

/** The option `director ingest` gains for `--from-git RANGE`. */
export function ingestFromGitOption(): OptionSpecs {
  return {
    "from-git": {
      type: "string",
      value: "RANGE",
      description:
        "ingest commit history instead of a file: A..B, or one ref for all of its history",
    },
    privacy: {
      type: "string",
      value: "public|private",
      description:
        "with --from-git or --from-seed: the notes' privacy (default private; public lets director sync send them)",
    },
  };
}

/** `--privacy` of an import (`--from-git`, `--from-seed`): private unless the user says public. */
export function importPrivacy(args: ParsedArgs): "public" | "private" {
  const stated = stringOption(args, "privacy");
  if (stated === undefined || stated === "private") return "private";
  if (stated === "public") return "public";
  throw new UsageError(
    `--privacy: expected public or private, got ${JSON.stringify(stated.slice(0, 40))} (a sensitive import is not offered: mark single notes sensitive with worker emit)`,
  );
}

/** `director ingest --from-git RANGE`: commits and their trailers as events. */
export async function runIngestFromGit(args: ParsedArgs): Promise<CommandOutput> {
  const range = stringOption(args, "from-git");
  if (range === undefined || range.trim() === "") {
    throw new UsageError("--from-git: expected a range, A..B or a single ref");
  }
  const [{ openContext }, { ingestGitRange }] = await Promise.all([
    import("../context/repo-context.js"),
    import("../director/from-git.js"),
  ]);
  const ctx = await openContext(repoOptions(args));
  const { buffer: _buffer, ...r } = await ingestGitRange(ctx, range, importPrivacy(args));
  return {
    json: r,
    text: `git ${r.range}: ${r.commits} commit(s), ${r.events} event(s): accepted ${r.accepted}, duplicates ${r.duplicates}, quarantined ${r.quarantined}, redacted ${r.redacted}\n`,
  };
}
