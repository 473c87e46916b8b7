import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BusUrl } from "../../bus/url.js";
import type { RepoContext } from "../../context/repo-context.js";
import { FOCUS_PATH } from "../../core/model/paths.js";
import type { CheckResult } from "../check.js";
import { type HookEvent, type Launcher, shellCommand } from "./launcher.js";

/**
 * What a host sends a hook on stdin. Claude Code (the Agent SDK's `BaseHookInput`):
 * `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `permission_mode?`; SessionStart
 * adds `source` (startup | resume | clear | compact | fork), SessionEnd `reason` (clear |
 * resume | logout | prompt_input_exit | other), PreCompact `trigger` (manual | auto) and
 * `custom_instructions` (a string, or null). Only the fields read here are kept.
 */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: string;
  source?: string;
  reason?: string;
  trigger?: string;
}

/** Claude Code caps a hook's additionalContext at 10,000 characters. */
export const CONTEXT_LIMIT = 10_000;

export interface HookOptions {
  launcher: Launcher;
  /** The folder the hook runs in when the host names none. */
  cwd: string;
  /** The bus to send over, resolved in the repository the hook found (its `[worker] bus`). */
  bus: (ctx: RepoContext) => Promise<BusUrl>;
  /** The host, for the worker id of its sessions (`claude-code-<session_id>`). */
  host: string;
  /** An explicit worker id (the flag, else $ENGRAM_WORKER_ID), else one per host session. */
  worker: string | undefined;
  /** An explicit run id, else the host's session id. */
  runId: string | undefined;
}

/** The host's answer on stdout, and what was done, for the log and the tests. */
export interface HookResult {
  output: Record<string, unknown>;
  /** Whether engram did what the event asks (false: the output says why). */
  done: boolean;
  message: string;
  /** What was wrong with the host's payload, read as empty instead. */
  payloadProblem?: string;
}

/** The host's payload: a payload that is not a JSON object is read as none (and said so). */
export function parseHookInput(text: string): { input: HookInput; problem: string | undefined } {
  if (text.trim() === "") return { input: {}, problem: undefined };
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const input: HookInput = {};
      for (const key of [
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "source",
        "reason",
        "trigger",
      ] as const) {
        const field = (value as Record<string, unknown>)[key];
        if (typeof field === "string") input[key] = field;
      }
      return { input, problem: undefined };
    }
  } catch {}
  return { input: {}, problem: "the host's hook input on stdin is not a JSON object" };
}

/** The repository's context, or why there is none (not a repository, not set up, bad config). */
async function contextFor(
  cwd: string,
): Promise<{ ctx: RepoContext; why?: undefined } | { ctx?: undefined; why: string }> {
  const [{ findRepository, requireInitialized }, { openContext }] = await Promise.all([
    import("../../context/find-repo.js"),
    import("../../context/repo-context.js"),
  ]);
  try {
    const repo = findRepository(undefined, cwd);
    requireInitialized(repo, undefined);
    return { ctx: await openContext({ repo }) };
  } catch (error) {
    return { why: String((error as Error).message ?? error) };
  }
}

/** The `worker check` verdict in words, with what to run (by absolute path). */
function verdictLines(r: CheckResult, launcher: Launcher): { lines: string[]; trusted: boolean } {
  const check = shellCommand(launcher, ["worker", "check"]);
  const problems = [
    ...(r.catalog_modified ? ["memory/catalog.json was modified"] : []),
    ...r.missing.map((p) => `missing: ${p}`),
    ...r.modified.map((p) => `modified: ${p}`),
    ...r.unlisted.map((p) => `unlisted: ${p}`),
    ...r.unsafe.map((p) => `refused: ${p}`),
    ...(r.focus_problem === null ? [] : [`MEMORY.md: ${r.focus_problem}`]),
  ];
  if (problems.length > 0) {
    return {
      trusted: false,
      lines: [
        `engram: memory does NOT match its catalog (version ${r.catalog_version}); MEMORY.md was not loaded, as it may be stale or planted:`,
        ...problems.slice(0, 10).map((p) => `- ${p}`),
        ...(problems.length > 10 ? [`- and ${problems.length - 10} more`] : []),
        `Stop and report this to the user; \`${check}\` prints the whole report.`,
      ],
    };
  }
  const d = r.drift;
  const head = `engram: memory matches catalog version ${r.catalog_version} (${r.catalog_hash}).`;
  if (d === null) return { trusted: true, lines: [head, "No main branch to compare with."] };
  if (d.reason === "uncommitted_memory") {
    return {
      trusted: true,
      lines: [
        head,
        `Memory not committed (uncommitted_memory): ${d.detail}; then run \`${check}\`.`,
      ],
    };
  }
  if (d.sync_required) {
    return {
      trusted: true,
      lines: [
        head,
        `Sync required (${d.reason}): ${d.detail}. Before relying on memory run \`${shellCommand(launcher, ["worker", "sync"])}\`, then \`${check}\`. The MEMORY.md below is this branch's, older than main's.`,
      ],
    };
  }
  return {
    trusted: true,
    lines: [head, `In sync with ${d.main_ref} (${d.commits_behind} commit(s) behind).`],
  };
}

/** MEMORY.md within `room` characters, cut at a line, with a note saying so. */
export function fitted(text: string, room: number): string {
  if (text.length <= room) return text;
  const note = `\n[MEMORY.md cut here at ${room} of ${text.length} characters: read the file for the rest]`;
  const cut = text.slice(0, Math.max(0, room - note.length));
  const line = cut.lastIndexOf("\n");
  return `${line > 0 ? cut.slice(0, line) : cut}${note}`;
}

/** Branch-name words that say what kind of branch it is, not what it is about. */
const BRANCH_NOISE = new Set([
  "feat",
  "feature",
  "fix",
  "bugfix",
  "hotfix",
  "wip",
  "chore",
  "dev",
  "docs",
  "refactor",
  "test",
  "tests",
  "release",
  "main",
  "master",
  "head",
]);

/** The topic a branch name states (`feat/schema-validation`: "schema validation"), if any. */
export function branchTopic(branch: string): string | undefined {
  const words = branch
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 2 && !BRANCH_NOISE.has(w) && !/^\d+$/.test(w));
  return words.length === 0 ? undefined : words.join(" ");
}

/**
 * What memory holds on the topic the branch's name states (`worker context`), within the
 * room MEMORY.md left: empty on main, on a detached HEAD, or when nothing matches.
 */
async function branchTopicContext(ctx: RepoContext, room: number): Promise<string> {
  if (room < 400) return "";
  try {
    const { gitAnswer } = await import("../../git/git-child.js");
    const head = await gitAnswer(ctx.repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
    const topic = head.code === 0 ? branchTopic(head.stdout.trim()) : undefined;
    if (topic === undefined) return "";
    const { topicContext } = await import("../../graph/queries.js");
    // About four characters a token: the answer fits the room left.
    const r = await topicContext(ctx, topic, { maxTokens: Math.floor((room - 100) / 4) });
    if (r.markdown === "" || r.items.length === 0) return "";
    const text = `\n\nMemory on this branch's topic ("${topic}"):\n${r.markdown}`;
    return text.length <= room ? text : "";
  } catch {
    return "";
  }
}

function sessionStartOutput(context: string): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: "SessionStart",
      additionalContext: context.slice(0, CONTEXT_LIMIT),
    },
  };
}

async function sessionStart(input: HookInput, options: HookOptions): Promise<HookResult> {
  const cwd = input.cwd ?? options.cwd;
  const opened = await contextFor(cwd);
  if (opened.ctx === undefined) {
    const message = `engram: no shared memory loaded: ${opened.why}`;
    return { output: sessionStartOutput(message), done: false, message };
  }
  const { checkMemory } = await import("../check.js");
  // Offline: a session start never waits on the network; the check says what it compared.
  const result = await checkMemory(opened.ctx, { offline: true });
  const { lines, trusted } = verdictLines(result, options.launcher);
  let context = lines.join("\n");
  if (trusted) {
    const focus = await readFile(join(opened.ctx.repoDir, FOCUS_PATH), "utf8").catch(
      () => undefined,
    );
    const room = CONTEXT_LIMIT - context.length - 2;
    context +=
      focus === undefined
        ? "\n\nNo MEMORY.md yet: no director run has compacted memory here."
        : `\n\n${fitted(focus, room)}`;
    context += await branchTopicContext(opened.ctx, CONTEXT_LIMIT - context.length);
  }
  return { output: sessionStartOutput(context), done: trusted, message: lines[0] as string };
}

/** The heartbeat that records a host session's moment (compaction, end) for `director status`. */
async function recordSession(
  event: "pre-compact" | "session-end",
  input: HookInput,
  options: HookOptions,
): Promise<HookResult> {
  const fail = (why: string): HookResult => ({
    output: { systemMessage: `engram: session not recorded: ${why}` },
    done: false,
    message: why,
  });
  const opened = await contextFor(input.cwd ?? options.cwd);
  if (opened.ctx === undefined) return fail(opened.why);
  const session = input.session_id ?? "unknown";
  const stage =
    event === "pre-compact"
      ? `${options.host} session compacting (${input.trigger ?? "auto"})`
      : `${options.host} session ended (${input.reason ?? "other"})`;
  const { emitHeartbeat } = await import("../emit.js");
  try {
    const sent = await emitHeartbeat(
      opened.ctx,
      { stage },
      {
        worker: options.worker ?? `${options.host}-${session}`,
        runId: options.runId ?? session.slice(0, 128),
      },
      await options.bus(opened.ctx),
    );
    const how = sent.spooled
      ? `spooled${sent.fallback_reason ? ` (${sent.transport} unavailable: ${sent.fallback_reason})` : ""}`
      : `sent (${sent.transport})`;
    const message = `${stage}: heartbeat ${sent.event_id} ${how}`;
    // The Director was not reachable: the session is recorded locally, and the user is told.
    if (sent.fallback_reason) {
      return {
        output: {
          systemMessage: `engram: ${message}; the Director reads it from this checkout's spool`,
        },
        done: true,
        message,
      };
    }
    return { output: { suppressOutput: true }, done: true, message };
  } catch (error) {
    return fail(String((error as Error).message ?? error));
  }
}

/**
 * Answers a host's hook. Never fails the host: outside a repository, with broken memory or
 * an unreachable bus it still answers (exit 0) and says why in its output.
 */
export async function runHook(
  event: HookEvent,
  stdin: string,
  options: HookOptions,
): Promise<HookResult> {
  const { input, problem } = parseHookInput(stdin);
  let result: HookResult;
  try {
    result =
      event === "session-start"
        ? await sessionStart(input, options)
        : await recordSession(event, input, options);
  } catch (error) {
    const why = `engram: hook ${event} failed: ${String((error as Error).message ?? error).split("\n")[0]}`;
    result = {
      output: event === "session-start" ? sessionStartOutput(why) : { systemMessage: why },
      done: false,
      message: why,
    };
  }
  if (problem === undefined) return result;
  return { ...result, payloadProblem: `${problem}; read as empty` };
}
