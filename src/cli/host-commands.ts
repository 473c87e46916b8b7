import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BusUrl } from "../bus/url.js";
import type { RepoContext } from "../context/repo-context.js";
import { nearest } from "../core/model/nearest.js";
import { StateError, UsageError } from "../errors.js";
import type { HookEvent, Launcher } from "../worker/hosts/launcher.js";
import type { HostName } from "../worker/hosts/plan.js";
import { type Command, stringOption } from "./args.js";
import { SENDER_OPTIONS } from "./sender-options.js";

/*
 * Light at the top, as worker-commands.ts explains: the planners, the check and the bus are
 * imported in `run`. The host and event names are repeated here so --help loads nothing.
 */
const HOST_NAMES: readonly HostName[] = ["claude-code", "codex", "cursor", "gemini"];
const EVENTS: readonly HookEvent[] = ["session-start", "pre-compact", "session-end"];

/** Node and this install's `engram` bin, both by absolute path, as every written command names them. */
function thisLauncher(): Launcher {
  const bin = fileURLToPath(new URL("./engram.js", import.meta.url));
  if (!existsSync(bin)) {
    throw new StateError(`${bin}: engram's bin is not built; run npm run build first`);
  }
  return { node: process.execPath, bin: realpathSync(bin) };
}

/** The launcher for a hook's words: never throws (a hook never fails its host). */
function hookLauncher(): Launcher {
  try {
    return thisLauncher();
  } catch {
    return { node: process.execPath, bin: fileURLToPath(new URL("./engram.js", import.meta.url)) };
  }
}

function hostOf(given: string): HostName {
  const host = HOST_NAMES.find((h) => h === given);
  if (host !== undefined) return host;
  const guess = HOST_NAMES.find((h) => h.startsWith(given)) ?? nearest(given, HOST_NAMES);
  throw new UsageError(
    `unknown host '${given}'${guess ? ` (did you mean '${guess}'?)` : ""}; expected ${HOST_NAMES.join(" | ")}`,
  );
}

/** `worker setup HOST`: plugs engram's MCP server, hooks and instructions into a host. */
export const setup: Command = {
  name: "setup",
  summary:
    "Plug engram into an agent host (claude-code, codex, cursor, gemini): its MCP server entry, Claude Code's and Gemini CLI's session hooks, and the memory instructions (AGENTS.md, GEMINI.md, a Cursor rule), merged into the host's files (every other key kept), each command naming node and engram by absolute path. --dry-run prints the change; --remove takes out what setup added.",
  usage:
    "worker setup claude-code|codex|cursor|gemini [--user] [--dry-run] [--remove] [--repo DIR] [--json]",
  options: {
    user: {
      type: "boolean",
      description:
        "the host's user files (~/.claude.json, ~/.cursor, ~/.gemini, $CODEX_HOME) instead of the repository's",
    },
    "dry-run": { type: "boolean", description: "print the change as a diff; write nothing" },
    remove: {
      type: "boolean",
      description: "take out what setup added (files it alone filled go)",
    },
  },
  positionals: [1, 1],
  anywhere: true,
  async run(args) {
    const host = hostOf(args.positionals[0] as string);
    const user = args.values.user === true;
    const dryRun = args.values["dry-run"] === true;
    const remove = args.values.remove === true;
    const given = stringOption(args, "repo");
    const warnings: string[] = [];
    let repoDir: string | undefined;
    // Project scope works on the repository; --user needs none (unless --repo names one).
    if (!user || given !== undefined) {
      const { findRepository, requireInitialized } = await import("../context/find-repo.js");
      repoDir = findRepository(given, process.cwd());
      if (!remove) {
        try {
          requireInitialized(repoDir, stringOption(args, "config"));
        } catch (error) {
          warnings.push(String((error as Error).message));
        }
      }
    }
    const home = process.getBuiltinModule("node:os").homedir();
    const [{ readAndPlanSetup, applySetup }, { setupText, setupJson }] = await Promise.all([
      import("../worker/hosts/apply.js"),
      import("../worker/hosts/plan-text.js"),
    ]);
    const plan = readAndPlanSetup({
      host,
      scope: user ? "user" : "project",
      remove,
      launcher: thisLauncher(),
      repoDir,
      home,
      codexHome: process.env.CODEX_HOME || join(home, ".codex"),
    });
    if (!dryRun) applySetup(plan);
    return { json: setupJson(plan, dryRun), text: setupText(plan, dryRun), warnings };
  },
};

/** The host's payload on stdin: at most 1 MiB, and never waiting past a host that keeps it open. */
function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve("");
  return new Promise((resolveText) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      process.stdin.off("data", take);
      process.stdin.destroy();
      resolveText(Buffer.concat(chunks).toString("utf8"));
    };
    const take = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 1 << 20) chunks.push(chunk);
    };
    const timer = setTimeout(finish, 2000);
    process.stdin.on("data", take);
    process.stdin.once("end", finish);
    process.stdin.once("error", finish);
  });
}

/** `worker hook EVENT`: answers an agent host's session hook; never fails the host. */
export const hook: Command = {
  name: "hook",
  summary:
    "Answer an agent host's session hook (Claude Code's or Gemini CLI's JSON on stdin): session-start prints the worker check verdict, what to do, and MEMORY.md as the session's context (hookSpecificOutput.additionalContext, at most 10,000 characters); pre-compact and session-end record the host session as a heartbeat for director status. Always exits 0: outside a repository, with broken memory or an unreachable bus it says why in its output.",
  usage:
    "worker hook session-start|pre-compact|session-end [--host NAME] [--worker ID] [--run-id ID] [--bus URL] [--json]",
  options: {
    host: {
      type: "string",
      value: "NAME",
      description:
        "the host, for its sessions' worker ids and stages (default claude-code; gemini)",
    },
    ...SENDER_OPTIONS,
  },
  positionals: [1, 1],
  anywhere: true,
  async run(args) {
    const event = EVENTS.find((e) => e === args.positionals[0]);
    const stdin = await readStdin();
    if (event === undefined) {
      const message = `engram: unknown hook event '${args.positionals[0]}' (expected ${EVENTS.join(" | ")}); nothing done`;
      const output = { systemMessage: message };
      return { json: output, text: `${JSON.stringify(output)}\n`, warnings: [message] };
    }
    const [{ runHook }, { busOption }] = await Promise.all([
      import("../worker/hosts/hook.js"),
      import("./sender-options.js"),
    ]);
    // A hook never breaks the host: a bus it cannot use is said, and the spool takes it.
    const bus = async (ctx: RepoContext): Promise<BusUrl> => {
      try {
        return await busOption(args, ctx);
      } catch (error) {
        process.stderr.write(`worker hook: ${(error as Error).message}; spooling instead\n`);
        return { kind: "spool" };
      }
    };
    const result = await runHook(event, stdin, {
      launcher: hookLauncher(),
      cwd: process.cwd(),
      bus,
      host: stringOption(args, "host") ?? "claude-code",
      worker: stringOption(args, "worker") ?? process.env.ENGRAM_WORKER_ID,
      runId: stringOption(args, "run-id"),
    });
    return {
      json: result.output,
      text: `${JSON.stringify(result.output)}\n`,
      warnings: [
        ...(result.done ? [] : [result.message]),
        ...(result.payloadProblem === undefined ? [] : [result.payloadProblem]),
      ],
    };
  },
};
