import { join } from "node:path";
import { UsageError } from "../../errors.js";
import { type ClaudeHook, editClaudeHooks, editMcpServers, type TextEdit } from "./json-edits.js";
import {
  type HookEvent,
  isEngramHookCommand,
  type Launcher,
  mcpEntry,
  shellCommand,
} from "./launcher.js";
import { cursorRule, editCursorRule, editMarkdownBlock, memoryInstructions } from "./text-edits.js";
import { editCodexConfig } from "./toml-edits.js";

/** The hosts `worker setup` plugs engram into. */
export const HOSTS = ["claude-code", "codex", "cursor", "gemini"] as const;
export type HostName = (typeof HOSTS)[number];
export type SetupScope = "project" | "user";

export interface SetupRequest {
  host: HostName;
  scope: SetupScope;
  /** Take out what setup added instead of adding it. */
  remove: boolean;
  launcher: Launcher;
  /** The repository (project scope; Codex's AGENTS.md). */
  repoDir: string | undefined;
  /** The user's home folder (user scope). */
  home: string;
  /** `$CODEX_HOME`, default `~/.codex`. */
  codexHome: string;
}

/** One file setup edits, and how. */
export interface SetupTarget {
  path: string;
  edit(before: string | undefined): TextEdit;
}

export type FileAction = "create" | "update" | "delete" | "unchanged";

export interface FileChange {
  path: string;
  action: FileAction;
  /** What changed in it, in words. */
  changes: string[];
  before: string | undefined;
  after: string | undefined;
}

/** What `worker setup` would do: every file, and what the user must still do by hand. */
export interface SetupPlan {
  host: HostName;
  scope: SetupScope;
  remove: boolean;
  files: FileChange[];
  notes: string[];
}

/** Claude Code's hook events engram answers, and the `worker hook` event of each. */
const CLAUDE_HOOKS: readonly { event: string; hook: HookEvent }[] = [
  // No matcher: every source (startup, resume, clear, compact, fork), and any Claude Code
  // adds later; after /clear, a compaction or a fork, memory must come back.
  { event: "SessionStart", hook: "session-start" },
  { event: "PreCompact", hook: "pre-compact" },
  { event: "SessionEnd", hook: "session-end" },
];
/** Gemini CLI's: the same shape in `.gemini/settings.json`, its compaction is PreCompress. */
const GEMINI_HOOKS: readonly { event: string; hook: HookEvent }[] = [
  { event: "SessionStart", hook: "session-start" },
  { event: "PreCompress", hook: "pre-compact" },
  { event: "SessionEnd", hook: "session-end" },
];
/** Seconds; engram's hooks answer in well under one, and never block the host for long. */
const HOOK_TIMEOUT_SECONDS = 10;

function claudeHooks(launcher: Launcher, remove: boolean): ClaudeHook[] {
  if (remove) return [];
  return CLAUDE_HOOKS.map(({ event, hook }) => ({
    event,
    command: shellCommand(launcher, ["worker", "hook", hook]),
    timeout: HOOK_TIMEOUT_SECONDS,
  }));
}

/** Gemini CLI's hooks: `--host gemini` names its sessions; its timeouts are milliseconds. */
function geminiHooks(launcher: Launcher, remove: boolean): ClaudeHook[] {
  if (remove) return [];
  return GEMINI_HOOKS.map(({ event, hook }) => ({
    event,
    command: shellCommand(launcher, ["worker", "hook", hook, "--host", "gemini"]),
    timeout: HOOK_TIMEOUT_SECONDS * 1000,
  }));
}

function repoOf(request: SetupRequest): string {
  if (request.repoDir === undefined) {
    throw new UsageError(
      `setup ${request.host}: run it inside the repository (or pass --repo DIR), or pass --user`,
    );
  }
  return request.repoDir;
}

/** The files setup edits for a host and scope, each with its edit. */
export function setupTargets(request: SetupRequest): SetupTarget[] {
  const { launcher, remove, home } = request;
  const user = request.scope === "user";
  // A project's entry names its repository: hosts start servers from folders of their own.
  // Codex's config.toml is user-wide whatever the scope: its server works where Codex runs.
  const pinned = user || request.host === "codex" ? undefined : repoOf(request);
  const entry = remove ? undefined : mcpEntry(launcher, pinned);
  const block = remove ? undefined : memoryInstructions(launcher);
  const servers = (path: string): SetupTarget => ({
    path,
    edit: (before) => editMcpServers(before, path, entry),
  });
  const markdown = (path: string): SetupTarget => ({
    path,
    edit: (before) => editMarkdownBlock(before, path, block),
  });
  const base = user ? home : repoOf(request);
  switch (request.host) {
    case "claude-code": {
      const settings = join(base, ".claude", "settings.json");
      return [
        servers(user ? join(home, ".claude.json") : join(base, ".mcp.json")),
        {
          path: settings,
          edit: (before) =>
            editClaudeHooks(before, settings, claudeHooks(launcher, remove), isEngramHookCommand),
        },
      ];
    }
    case "codex": {
      const config = join(request.codexHome, "config.toml");
      return [
        { path: config, edit: (before) => editCodexConfig(before, config, entry) },
        markdown(user ? join(request.codexHome, "AGENTS.md") : join(base, "AGENTS.md")),
      ];
    }
    case "cursor": {
      const mcp = servers(join(base, ".cursor", "mcp.json"));
      if (user) return [mcp];
      const rule = join(base, ".cursor", "rules", "engram.mdc");
      const wanted = remove ? undefined : cursorRule(launcher);
      return [mcp, { path: rule, edit: (before) => editCursorRule(before, rule, wanted) }];
    }
    case "gemini": {
      // One file holds the server and the hooks: both edits, in turn, on its text.
      const settings = join(base, ".gemini", "settings.json");
      const hooks = geminiHooks(launcher, remove);
      return [
        {
          path: settings,
          edit: (before) => {
            const server = editMcpServers(before, settings, entry);
            const hooked = editClaudeHooks(server.after, settings, hooks, isEngramHookCommand);
            return { after: hooked.after, changes: [...server.changes, ...hooked.changes] };
          },
        },
        markdown(user ? join(home, ".gemini", "GEMINI.md") : join(base, "GEMINI.md")),
      ];
    }
  }
}

/** What the user must still do by hand, or know, after setup. */
function notesFor(request: SetupRequest): string[] {
  if (request.remove) return [];
  const notes: string[] = [];
  if (request.scope === "project" && request.host !== "codex") {
    notes.push(
      "the files written name this machine's node and engram by absolute path: keep them out of git, or run worker setup on each machine",
    );
  }
  switch (request.host) {
    case "claude-code":
      notes.push(
        request.scope === "project"
          ? "Claude Code asks once to approve the project's .mcp.json server: approve engram"
          : "Claude Code rewrites ~/.claude.json while it runs: run this with Claude Code closed",
      );
      break;
    case "codex":
      notes.push(
        "Codex's config.toml is the user's: its engram server works on the repository Codex is started in",
      );
      break;
    case "cursor":
      notes.push(
        "enable the engram server in Cursor's MCP settings if Cursor lists it as disabled",
      );
      if (request.scope === "user") {
        notes.push(
          "Cursor keeps user rules in its settings, not in files: run setup in each repository for the rule",
        );
      }
      break;
    case "gemini":
      notes.push(
        "Gemini CLI starts stdio MCP servers and runs project hooks only in a folder you trusted: trust this folder (the trust dialog, or /permissions) or neither the engram server nor its hooks run",
      );
      break;
  }
  return notes;
}

/**
 * The plan for a host and scope, from the files' current text (`contents`: undefined for a
 * file that does not exist). Pure: nothing is read or written here. A file that does not
 * parse is an InputError naming it.
 */
export function planSetup(
  request: SetupRequest,
  contents: ReadonlyMap<string, string | undefined>,
): SetupPlan {
  const files = setupTargets(request).map((target): FileChange => {
    const before = contents.get(target.path);
    const { after, changes } = target.edit(before);
    const action: FileAction =
      after === before
        ? "unchanged"
        : after === undefined
          ? "delete"
          : before === undefined
            ? "create"
            : "update";
    return { path: target.path, action, changes, before, after };
  });
  return {
    host: request.host,
    scope: request.scope,
    remove: request.remove,
    files,
    notes: notesFor(request),
  };
}
