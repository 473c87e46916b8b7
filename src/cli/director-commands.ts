import { BUS_URL_FORMS, parseBusUrl } from "../bus/url.js";
import type { RepoContext } from "../context/repo-context.js";
import { UsageError } from "../errors.js";
import { type Command, inputFile, type ParsedArgs, repoOptions, stringOption } from "./args.js";
import { BUS_COMMANDS } from "./bus-commands.js";
import { CONFIRM_COMMAND } from "./confirm-command.js";
import { DASHBOARD_COMMAND } from "./dashboard-command.js";
import {
  GIT_COMMANDS,
  importPrivacy,
  ingestFromGitOption,
  runIngestFromGit,
} from "./git-commands.js";
import { STATUS_COMMAND, VERIFY_COMMAND } from "./inspect-commands.js";
import { reviewCommands } from "./review-commands.js";
import { RUN_COMMAND, runPr } from "./run-command.js";
import { SET_ASIDE_COMMAND } from "./set-aside-command.js";
import { SYNC_COMMAND } from "./sync-commands.js";
import { rollbackCommand, VERSION_COMMANDS } from "./version-commands.js";

/*
 * The Director's command table, in the order of its help text, with the commands that set a
 * repository up and feed its buffer (init, ingest); the others live in a module per group.
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

export const DIRECTOR_COMMANDS: readonly Command[] = [
  init,
  ingest,
  RUN_COMMAND,
  VERIFY_COMMAND,
  STATUS_COMMAND,
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
