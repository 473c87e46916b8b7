/**
 * `director run`: one Director cycle, or with `--pr` its result proposed as a pull request
 * (`runPr`, which rollback and review lend to their own commands), and the lines that report
 * either. Imports only types and argument parsing: the cycle loads when the command runs.
 */
import type { RepoContext } from "../context/repo-context.js";
import { shownPath } from "../context/within.js";
import type { SessionStepReport } from "../director/consolidate.js";
import type { ProposeOptions } from "../director/propose-types.js";
import type { RunOptions, RunResult } from "../director/run.js";
import { UsageError } from "../errors.js";
import {
  type Command,
  type CommandOutput,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";

/** The repository context every command opens, loaded on demand. */
async function openCtx(args: ParsedArgs): Promise<RepoContext> {
  const { openContext } = await import("../context/repo-context.js");
  return openContext(repoOptions(args));
}

/** `director run`: one cycle; `--pr` commits it on the engram branch and opens its pull request. */
export const RUN_COMMAND: Command = {
  name: "run",
  summary:
    "One Director cycle: drain the spool, compact the oldest events when over budget, promote, evict, write the catalog and MEMORY.md.",
  usage:
    "director run [--force | --flush] [--dry-run] [--pr [--remote NAME] [--base BRANCH] [--branch NAME]] [--repo DIR] [--config FILE] [--json]",
  options: {
    force: {
      type: "boolean",
      description: "compact all but the newest window now, ignoring soft limits",
    },
    flush: {
      type: "boolean",
      description:
        "compact the whole buffer now, the newest window too (the end of a CI job or a session)",
    },
    "dry-run": { type: "boolean", description: "plan and report; write no memory file" },
    pr: {
      type: "boolean",
      description:
        "commit the result on the engram branch (not the work tree), push it and open or update its pull request",
    },
    remote: {
      type: "string",
      value: "NAME",
      description: "with --pr: the remote (default origin)",
    },
    base: {
      type: "string",
      value: "BRANCH",
      description: "with --pr: the base branch (default main)",
    },
    branch: {
      type: "string",
      value: "NAME",
      description: "with --pr: the Director's branch (default engram/memory)",
    },
  },
  async run(args) {
    const { drainConfiguredSources, droppedWarnings } = await import("../bus/sources.js");
    const ctx = await openCtx(args);
    const cycle = {
      force: args.values.force === true,
      flush: args.values.flush === true,
      dryRun: args.values["dry-run"] === true,
      drainSources: drainConfiguredSources,
    };
    if (args.values.pr === true) return runPr(ctx, args, cycle);
    for (const name of ["remote", "base", "branch"]) {
      if (stringOption(args, name) !== undefined) throw new UsageError(`--${name} needs --pr`);
    }
    const { runCycle } = await import("../director/run.js");
    const r = await runCycle(ctx, cycle);
    return { json: r, text: `${runLines(r).join("\n")}\n`, warnings: droppedWarnings(r.sources) };
  },
};

function runLines(r: RunResult): string[] {
  return [
    `${r.dry_run ? "would write" : "catalog"} version ${r.catalog_version} ${r.catalog_hash}`,
    `drained ${r.drained.files} spool file(s): accepted ${r.drained.accepted}, duplicates ${r.drained.duplicates}, quarantined ${r.drained.quarantined}${r.drained.set_aside.length > 0 ? `, set aside ${r.drained.set_aside.length} entries that are not spool files` : ""}`,
    ...r.sources.map((s) =>
      s.error !== undefined
        ? `could not drain ${s.source}: ${s.error}`
        : `drained ${s.source}: accepted ${s.accepted}, duplicates ${s.duplicates}, quarantined ${s.quarantined}${s.dropped ? `, dropped by the source ${s.dropped}` : ""}`,
    ),
    `compaction: ${r.compaction}; ${r.compacted_events} event(s) compacted into ${r.engrams_written} engram(s)${r.compacted_events > 0 && r.engrams_written === 0 ? " (telemetry without a stall, blocked work or failure pattern makes none)" : ""}, ${r.engrams_promoted} promoted, ${r.engrams_evicted} evicted`,
    ...(r.not_compacted
      ? [`nothing compacted: ${r.not_compacted.reason}; ${r.not_compacted.hint}`]
      : []),
    `buffer: ${r.buffer.events} events, ${r.buffer.bytes} bytes`,
    `tiers: st ${r.tiers.st.files} files ${r.tiers.st.bytes} bytes; lt ${r.tiers.lt.files} files ${r.tiers.lt.bytes} bytes`,
    r.focus ? `MEMORY.md: ${r.focus.items} items, ${r.focus.bytes} bytes` : "MEMORY.md: up to date",
    ...(r.focus_rewritten !== undefined
      ? [
          `MEMORY.md ${r.dry_run ? "would be" : "was"} rewritten: it is not what the Director generates (${r.focus_rewritten})`,
        ]
      : []),
    ...(r.sessions ?? []).map(sessionLine),
    ...r.written.map((p) => `  + ${p}`),
    ...r.evicted.map((p) => `  - ${p}`),
  ];
}

function sessionLine(s: SessionStepReport): string {
  const applied = Object.entries(s.applied)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
  const rejected = Object.entries(s.rejected)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`)
    .join(", ");
  const held = s.conflicts.filter((c) => c.resolution === "held_for_review").map((c) => c.key);
  const overwritten = s.conflicts.filter((c) => c.resolution === "overwritten").map((c) => c.key);
  return [
    `session ${s.session_id}: version ${s.from_version} -> ${s.to_version}`,
    `applied ${applied || "nothing"}`,
    ...(s.merged > 0 ? [`${s.merged} merged into existing knowledge`] : []),
    ...(rejected ? [`rejected ${rejected}`] : []),
    ...(overwritten.length > 0
      ? [`state changed since its parent, overwritten: ${overwritten.join(", ")}`]
      : []),
    ...(held.length > 0
      ? [`core changed since its parent, held for review: ${held.join(", ")}`]
      : []),
  ].join("; ");
}

/** `director run --pr` (and rollback's and review's `--pr`): the cycle, then its proposal. */
export async function runPr(
  ctx: RepoContext,
  args: ParsedArgs,
  cycle: RunOptions & Pick<ProposeOptions, "beforeCycle">,
): Promise<CommandOutput> {
  const [github, port, { runProposal }, { droppedWarnings }, { proposalPlanLines }, tree] =
    await Promise.all([
      import("../github/client.js"),
      import("../director/github-port.js"),
      import("../director/propose.js"),
      import("../bus/sources.js"),
      import("../core/rendering/proposal-plan.js"),
      import("../director/work-tree-memory.js"),
    ]);
  const { workTreeLines } = tree;
  const { callCount, createGitHub, githubSettings } = github;
  const { githubCommitter, githubFileUrl, githubPulls } = port;
  const { trustOf } = await import("../context/trust.js");
  const settings = githubSettings(process.env, ctx.config, trustOf(ctx).userConfig);
  const branch = stringOption(args, "branch") ?? ctx.config.github.head_branch;
  const gh = settings ? createGitHub(settings) : null;
  const { run, proposal: p } = await runProposal(ctx, {
    ...cycle,
    remote: stringOption(args, "remote") ?? "origin",
    base: stringOption(args, "base") ?? ctx.config.github.base_branch,
    branch,
    ...(gh && settings
      ? {
          pulls: githubPulls(gh, settings),
          apiCommit: githubCommitter(gh, settings),
          preferApi: settings.useGitDataApi,
          fileUrl: githubFileUrl(settings, branch),
        }
      : {}),
    // Set by the GitHub Action when it uploads the dashboard (input `dashboard`).
    ...(process.env.ENGRAM_DASHBOARD_URL ? { dashboardUrl: process.env.ENGRAM_DASHBOARD_URL } : {}),
  });
  if (gh) Object.assign(p, { api_calls: callCount(gh.usage) });
  const head = p.head_sha ? p.head_sha.slice(0, 12) : "none";
  const lines = [
    ...runLines(run).map((l) => l.replace(/^catalog version/, "staged catalog version")),
    `proposal: ${p.status}; ${p.branch} at ${head} on ${p.base} ${p.main_sha.slice(0, 12)}${p.pushed ? ` (pushed to ${p.remote})` : p.remote === null ? " (no remote: committed locally)" : ""}`,
    ...(p.carried > 0
      ? [`carried ${p.carried} engram(s) of the previous proposal onto ${p.base}`]
      : []),
    ...(p.rejected > 0
      ? [`${p.rejected} engram(s) rejected by closed pull requests, not proposed again`]
      : []),
    ...workTreeLines(p.work_tree ?? undefined, p.base, p.status === "dry-run"),
    ...(p.pr
      ? [`pull request #${p.pr.number} ${p.pr.created ? "opened" : "updated"}: ${p.pr.url}`]
      : []),
    ...(p.plan ? proposalPlanLines(p.plan) : []),
    ...(p.would_open
      ? [
          `no GitHub configured; the pull request would be "${p.would_open.title}"`,
          `  its body (${p.would_open.body.trimEnd().split("\n").length} lines): ${await saveBody(ctx, p.would_open.body)} (in --json: proposal.would_open.body)`,
        ]
      : []),
  ];
  return {
    json: { ...run, proposal: p },
    text: `${lines.join("\n")}\n`,
    warnings: droppedWarnings(run.sources),
  };
}

/**
 * The body of the pull request that would be opened runs to pages: the text output names a
 * file in the state folder instead (0600, replaced atomically), `--json` carries it whole.
 */
async function saveBody(ctx: RepoContext, body: string): Promise<string> {
  const [{ join }, { writeFileAtomicSync }] = await Promise.all([
    import("node:path"),
    import("../state/atomic.js"),
  ]);
  const path = join(ctx.paths.root, "pull-request.md");
  writeFileAtomicSync(path, body.endsWith("\n") ? body : `${body}\n`);
  return shownPath(process.cwd(), path);
}
