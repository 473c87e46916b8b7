import { BUS_URL_FORMS, parseBusUrl } from "../bus/url.js";
import type { RepoContext } from "../context/repo-context.js";
import { shownPath } from "../context/within.js";
import type { SessionStepReport } from "../director/consolidate.js";
import type { ProposeOptions } from "../director/propose-types.js";
import type { RunOptions, RunResult } from "../director/run.js";
import { UsageError } from "../errors.js";
import {
  type Command,
  type CommandOutput,
  inputFile,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";
import { BUS_COMMANDS } from "./bus-commands.js";
import { CONFIRM_COMMAND } from "./confirm-command.js";
import { DASHBOARD_COMMAND } from "./dashboard-command.js";
import {
  GIT_COMMANDS,
  importPrivacy,
  ingestFromGitOption,
  runIngestFromGit,
} from "./git-commands.js";
import { EXIT } from "./main.js";
import { reviewCommands } from "./review-commands.js";
import { SET_ASIDE_COMMAND } from "./set-aside-command.js";
import { humanBudget } from "./sizes.js";
import { SYNC_COMMAND } from "./sync-commands.js";
import { rollbackCommand, VERSION_COMMANDS } from "./version-commands.js";

/*
 * A thin table: only argument parsing and types are imported here. Each command's `run`
 * imports its work with `await import()`, so `director status` does not load GitHub, NATS
 * or the compactor. New commands follow the same pattern.
 */

/** The repository context every command opens, loaded on demand. */
async function openCtx(args: ParsedArgs): Promise<RepoContext> {
  const { openContext } = await import("../context/repo-context.js");
  return openContext(repoOptions(args));
}

const init: Command = {
  name: "init",
  summary:
    "Create config/dev.toml, the memory/ skeleton, MEMORY.md and the git-ignored state folder; with --bus, the team's default bus ([worker] bus).",
  usage: "director init [--bus URL] [--repo DIR] [--config FILE] [--json]",
  options: {
    bus: {
      type: "string",
      value: "URL",
      description:
        "the team's default bus, written as [worker] bus: git:REMOTE (director run drains it), spool, or tcp://, tls://, nats:// HOST:PORT",
    },
  },
  uninitialized: true,
  async run(args) {
    const [{ initRepository }, { openContext, checkContextState }] = await Promise.all([
      import("../director/init.js"),
      import("../context/repo-context.js"),
    ]);
    const bus = stringOption(args, "bus");
    if (bus !== undefined) (await import("../bus/url.js")).parseBusUrl(bus);
    // The state folder is checked once init has written the .gitignore line for it.
    const ctx = await openContext({ ...repoOptions(args), checkState: false });
    const result = initRepository(ctx);
    await checkContextState(ctx);
    const team =
      bus === undefined
        ? undefined
        : await (await import("../director/init-bus.js")).setTeamBus(ctx, bus);
    const text = [
      ...result.created.map((p) => `created ${p}`),
      ...result.kept.map((p) => `kept    ${p}`),
      ...(team
        ? [`${team.written ? "set    " : "kept   "} [worker] bus = ${JSON.stringify(team.bus)}`]
        : []),
    ].join("\n");
    return {
      json: team ? { ...result, bus: team } : result,
      text: `${text}\n`,
      ...(team?.warning ? { warnings: [team.warning] } : {}),
    };
  },
};

const ingest: Command = {
  name: "ingest",
  summary:
    "Read agent-bus envelopes (NDJSON) from FILE or - (stdin), from a bus source with --bus URL, commits and their trailers with --from-git RANGE, or a pai-seed seed.json with --from-seed PATH, into the durable buffer; bad lines go to the quarantine.",
  usage:
    "director ingest FILE|-|--bus URL|--from-git RANGE|--from-seed PATH [--privacy public|private] [--repo DIR] [--config FILE] [--json]",
  options: {
    ...ingestFromGitOption(),
    "from-seed": {
      type: "string",
      value: "PATH",
      description:
        "import a pai-seed seed.json: its confirmed learnings and pending proposals (never writes it)",
    },
    bus: {
      type: "string",
      value: "URL",
      description: "drain a bus source: nats://HOST:PORT or git:REMOTE",
    },
  },
  positionals: [0, 1],
  async run(args) {
    const fromGit = stringOption(args, "from-git") !== undefined;
    const busText = stringOption(args, "bus");
    const fromSeed = stringOption(args, "from-seed");
    const chosen = [
      fromGit,
      busText !== undefined,
      fromSeed !== undefined,
      args.positionals.length === 1,
    ];
    if (chosen.filter(Boolean).length !== 1) {
      throw new UsageError(
        "expected exactly one of FILE, -, --bus URL, --from-git RANGE or --from-seed PATH",
        { usage: `usage: ${ingest.usage}\n` },
      );
    }
    if (stringOption(args, "privacy") !== undefined && !fromGit && fromSeed === undefined) {
      throw new UsageError(
        "--privacy: only with --from-git or --from-seed (an envelope states its own privacy)",
      );
    }
    if (fromGit) return runIngestFromGit(args);
    if (fromSeed !== undefined) {
      const { ingestSeed } = await import("../director/from-seed.js");
      const path = inputFile(fromSeed);
      const ctx = await openCtx(args);
      const { buffer: _buffer, ...r } = await ingestSeed(ctx, path, importPrivacy(args));
      return {
        json: r,
        text: `seed ${fromSeed}: ${r.learnings} learning(s), ${r.proposals} proposal(s), ${r.skipped} skipped: accepted ${r.accepted}, duplicates ${r.duplicates}, quarantined ${r.quarantined}, redacted ${r.redacted}\n`,
      };
    }
    if (busText !== undefined) {
      const url = parseBusUrl(busText);
      if (url.kind !== "nats" && url.kind !== "git") {
        throw new UsageError(
          `--bus: expected nats://HOST:PORT or git:REMOTE (of ${BUS_URL_FORMS})`,
        );
      }
      const [{ withDirectorState }, { drainSource, droppedWarnings }] = await Promise.all([
        import("../director/director-state.js"),
        import("../bus/sources.js"),
      ]);
      const ctx = await openCtx(args);
      const r = await withDirectorState(
        ctx,
        (buffer) => drainSource(ctx, buffer, url, { userChosen: true }),
        {
          retainEvents: false,
        },
      );
      return {
        json: r,
        text: `${r.source}: accepted ${r.accepted}, duplicates ${r.duplicates}, quarantined ${r.quarantined}, redacted ${r.redacted}, acknowledged ${r.acknowledged}${r.dropped ? `, dropped by the source ${r.dropped}` : ""}\n`,
        warnings: droppedWarnings([r]),
      };
    }
    const { ingestSource } = await import("../director/ingest.js");
    const source = args.positionals[0] as string;
    const input =
      source === "-"
        ? { stream: process.stdin, name: "stdin" }
        : { path: inputFile(source), name: source };
    const ctx = await openCtx(args);
    const { buffer: _buffer, noteLines, ...c } = await ingestSource(ctx, input);
    return {
      json: c,
      text: `accepted ${c.accepted}, duplicates ${c.duplicates}, quarantined ${c.quarantined}, redacted ${c.redacted}\n`,
      warnings: noteLines > 0 ? [notesFileWarning(source, noteLines)] : [],
    };
  },
};

/** `director ingest` of a `worker emit --from` notes file: name the mistake and the fix. */
function notesFileWarning(source: string, lines: number): string {
  const file = source === "-" ? "FILE" : source;
  return `${source === "-" ? "stdin" : source}: ${lines} line(s) are worker notes (kind, text), not agent-bus envelopes, and were quarantined; send a notes file with \`worker emit --from ${file}\``;
}

const run: Command = {
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

async function runPr(
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

const verify: Command = {
  name: "verify",
  summary:
    "Recompute every hash and check paths, ids, duplicates, layout and budgets; one line per problem.",
  usage: "director verify [--repo DIR] [--config FILE] [--json]",
  options: {},
  async run(args) {
    const [{ verifyRepository }, { formatFinding }] = await Promise.all([
      import("../director/verify.js"),
      import("../core/checks/findings.js"),
    ]);
    const ctx = await openCtx(args);
    const findings = await verifyRepository(ctx);
    const text =
      findings.length === 0
        ? "ok: memory verified\n"
        : `${findings.map(formatFinding).join("\n")}\n`;
    return {
      json: { ok: findings.length === 0, findings },
      text,
      exitCode: findings.length === 0 ? EXIT.ok : EXIT.findings,
    };
  },
};

const status: Command = {
  name: "status",
  summary:
    "Show the buffer, tiers, focus view, quarantine and spool against their budgets, and the swarm: each worker's stage, liveness and drift from main.",
  usage: "director status [--snapshot] [--repo DIR] [--config FILE] [--json]",
  options: {
    snapshot: {
      type: "boolean",
      description:
        "print the status as one project_state_snapshot.v1 envelope (NDJSON) for operator tools",
    },
  },
  async run(args) {
    const { readStatus, snapshotEnvelope } = await import("../director/status.js");
    const ctx = await openCtx(args);
    const s = await readStatus(ctx);
    if (args.values.snapshot === true) {
      const { receiptTime } = await import("../clock.js");
      const envelope = snapshotEnvelope(s, receiptTime());
      return { json: envelope, text: `${JSON.stringify(envelope)}\n` };
    }
    const lines = [
      `catalog: version ${s.catalog.version}, ${s.catalog.entries} engrams, ${s.catalog.hash}`,
      `buffer:  ${s.buffer.events}/${s.buffer.max_events} events, ${humanBudget(s.buffer.bytes, s.buffer.max_bytes)}`,
      `st:      ${s.tiers.st.files}/${s.tiers.st.max_files} files, ${humanBudget(s.tiers.st.bytes, s.tiers.st.max_bytes)}`,
      `lt:      ${s.tiers.lt.files}/${s.tiers.lt.max_files} files, ${humanBudget(s.tiers.lt.bytes, s.tiers.lt.max_bytes)}`,
      `focus:   ${s.focus.present ? `${s.focus.items}/${s.focus.max_items} items, ${humanBudget(s.focus.bytes, s.focus.max_bytes)}${s.focus.fresh ? "" : " (stale)"}` : "missing"}`,
      `spool:   ${s.spool.files} file(s) waiting${refusedLine(s.spool.refused)}`,
      `quarantine: ${s.quarantine.records} record(s) of ${s.quarantine.lines} line(s)${Object.entries(
        s.quarantine.by_reason,
      )
        .map(([k, v]) => ` ${k}=${v}`)
        .join(
          "",
        )}${s.quarantine.dropped.lines > 0 ? `; over its budget: ${s.quarantine.dropped.lines} line(s) dropped, ${s.quarantine.dropped.bytes} bytes` : ""}`,
      `last compaction: ${s.last_compaction_at ?? "never"}`,
      `workers:${s.swarm.workers.length === 0 ? " none heard from" : ""}`,
      ...s.swarm.workers.map(
        (w) =>
          `  ${w.worker}: ${w.live ? "live" : "silent"}, last seen ${Math.round(w.age_seconds)} s ago` +
          `${w.stage ? `, stage ${w.stage}` : ""}${w.issue ? `, issue ${w.issue}` : ""}` +
          `${w.progress !== null ? `, ${Math.round(w.progress * 100)}%` : ""}` +
          `${w.errors > 0 ? `, ${w.errors} error(s)` : ""}${w.catalog_mismatch ? ", sees another catalog" : ""}` +
          `${w.drift?.sync_required ? `, must sync (${w.drift.reason}: ${w.drift.required_action})` : ""}`,
      ),
      ...s.swarm.errors.map((e) => `  error ${e.error_type} x${e.count} (${e.workers.join(", ")})`),
      ...s.swarm.liveness_problems.map((p) => `  note: ${p}`),
    ];
    return { json: s, text: `${lines.join("\n")}\n` };
  },
};

export const DIRECTOR_COMMANDS: readonly Command[] = [
  init,
  ingest,
  run,
  verify,
  status,
  ...VERSION_COMMANDS,
  rollbackCommand(runPr),
  ...reviewCommands(runPr),
  ...GIT_COMMANDS,
  SET_ASIDE_COMMAND,
  CONFIRM_COMMAND,
  ...BUS_COMMANDS,
  SYNC_COMMAND,
  DASHBOARD_COMMAND,
];

/** `; refused: a (2 sends, 9000 bytes)`: the senders whose share of the spool was full. */
function refusedLine(refused: Record<string, { sends: number; bytes: number }>): string {
  const senders = Object.entries(refused);
  if (senders.length === 0) return "";
  const each = senders.map(([id, c]) => `${id} (${c.sends} send(s), ${c.bytes} bytes)`);
  return `; refused at their share: ${each.join(", ")}`;
}
