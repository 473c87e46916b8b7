import { UsageError } from "../errors.js";
import { WRITE_FLAGS, type WriteFlag, writeUsageLines } from "../sessions/write-flags.js";
import { type Command, numberOption, type ParsedArgs, repoOptions, stringOption } from "./args.js";
import { busOption, SENDER_OPTIONS, senderOf } from "./sender-options.js";

const ACTIONS = ["start", "write", "show", "list", "end", "discard"] as const;
type Action = (typeof ACTIONS)[number];

/** The session an action names: `ID` or `--session ID`, both forms for every action. */
function sessionId(args: ParsedArgs, action: Action): string {
  const positional = args.positionals[1];
  const flag = stringOption(args, "session");
  if (positional !== undefined && flag !== undefined && positional !== flag) {
    throw new UsageError(`${action}: two sessions named, "${positional}" and --session ${flag}`);
  }
  const id = positional ?? flag;
  if (id === undefined)
    throw new UsageError(`${action}: expected a session id (ID or --session ID)`);
  return id;
}

function noExtraPositional(args: ParsedArgs, action: Action): void {
  if (args.positionals.length > 1) {
    throw new UsageError(`${action}: unexpected "${args.positionals[1]}"`);
  }
}

function noSession(args: ParsedArgs, action: Action): void {
  if (stringOption(args, "session") !== undefined) {
    throw new UsageError(`${action}: --session names a session of write, show, end or discard`);
  }
}

/**
 * `worker session ACTION`: a sandbox whose writes go to a durable, git-ignored session buffer
 * only, until `end` sends the whole buffer to the Director as one delivery.
 */
export const session: Command = {
  name: "session",
  summary:
    "Sandbox sessions: start one on the current memory version, write episodes, knowledge, state and core items to its durable buffer only (never the bus, never memory/), show or list them, end one (its whole buffer goes to the Director as one delivery, consolidated by the next `director run` as one new version) or discard it (nothing is sent).",
  usage: [
    "worker session start [--name NAME] [--json]",
    ...writeUsageLines("       worker session write ID|--session ID"),
    "       worker session show ID|--session ID [--json] | worker session list [--json]",
    "       worker session discard ID|--session ID",
    "       worker session end ID|--session ID [--bus URL] [--worker ID] [--run-id ID] [--json]",
  ].join("\n"),
  options: {
    ...SENDER_OPTIONS,
    name: { type: "string", value: "NAME", description: "start: a label for the session" },
    session: {
      type: "string",
      value: "ID",
      description: "write, show, end, discard: the session (the same as the ID positional)",
    },
    kind: {
      type: "string",
      value: "KIND",
      description: "write: episode | fact | lesson | convention | decision | state | core",
    },
    ...Object.fromEntries(
      Object.entries(WRITE_FLAGS).map(([flag, f]) => [flag, { type: "string", ...f }]),
    ),
  },
  positionals: [1, 2],
  async run(args) {
    const action = args.positionals[0] as Action;
    if (!ACTIONS.includes(action)) {
      throw new UsageError(`expected ${ACTIONS.join(" | ")}, got "${action}"`);
    }
    // Imported here, not at the top: see the note in worker-commands.ts.
    const { openContext } = await import("../context/repo-context.js");
    const ctx = await openContext(repoOptions(args));
    const s = await import("../sessions/session.js");
    switch (action) {
      case "start": {
        noExtraPositional(args, action);
        noSession(args, action);
        const r = await s.startSession(ctx, stringOption(args, "name"));
        return {
          json: r,
          text: `${r.session_id} (parent: catalog version ${r.parent_version}, ${r.parent_commit?.slice(0, 12) ?? "no commit"})\n`,
        };
      }
      case "write": {
        const id = sessionId(args, action);
        const kind = stringOption(args, "kind");
        if (kind === undefined) throw new UsageError("--kind is required");
        const flags = Object.keys(WRITE_FLAGS) as WriteFlag[];
        const item = await s.writeToSession(ctx, id, {
          kind,
          ...Object.fromEntries(flags.map((f) => [f, stringOption(args, f)])),
          confidence: numberOption(args, "confidence"),
        });
        return {
          json: { session_id: id, ...item },
          text: `${id}: wrote ${item.kind} #${item.seq}${item.redactions > 0 ? ` (${item.redactions} secret(s) redacted)` : ""}\n`,
        };
      }
      case "show": {
        const v = s.showSession(ctx, sessionId(args, action));
        const counts = Object.entries(v.counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${n} ${k}`)
          .join(", ");
        return {
          json: v,
          text: `${v.session_id}${v.name ? ` (${v.name})` : ""}: ${v.status}, parent version ${v.parent_version}, ${v.items.length} item(s)${counts ? `: ${counts}` : ""}\n`,
        };
      }
      case "list": {
        noExtraPositional(args, action);
        noSession(args, action);
        const list = s.listSessions(ctx);
        return {
          json: list,
          text:
            list.length === 0
              ? "no session\n"
              : list
                  .map(
                    (v) =>
                      `${v.session_id}  ${v.status}  parent ${v.parent_version}  ${Object.values(v.counts).reduce((a, b) => a + b, 0)} item(s)${v.name ? `  ${v.name}` : ""}\n`,
                  )
                  .join(""),
        };
      }
      case "end": {
        const { endSession } = await import("../sessions/end.js");
        const r = await endSession(
          ctx,
          sessionId(args, action),
          senderOf(args),
          await busOption(args, ctx),
        );
        const how = r.spooled
          ? `spooled${r.fallback_reason ? ` (${r.transport} unavailable: ${r.fallback_reason})` : ""}`
          : `sent (${r.transport})`;
        return {
          json: r,
          text: `${r.session_id}: ended, ${r.items} item(s) in ${r.parts} message(s) ${how}; the next director run consolidates it\n`,
        };
      }
      case "discard": {
        const r = await s.discard(ctx, sessionId(args, action));
        return {
          json: r,
          text: `${r.session_id}: discarded, ${r.items_dropped} item(s) dropped\n`,
        };
      }
    }
  },
};
