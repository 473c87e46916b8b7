/**
 * How a host starts engram: node and the `engram` bin, both by absolute path. Hosts started
 * from a desktop have no shell PATH, `npx worker` is an unrelated npm package, and `engram`
 * is not published: no written command may depend on any of them.
 */
export interface Launcher {
  /** The node that runs engram (`process.execPath`). */
  node: string;
  /** The resolved absolute path of the engram bin (`dist/bin/engram.js`). */
  bin: string;
}

/** An MCP server entry as the hosts' `mcpServers` tables hold it. */
export interface McpEntry {
  command: string;
  args: string[];
}

/** The `worker mcp` server entry; `repo` pins the repository (project scope). */
export function mcpEntry(launcher: Launcher, repo: string | undefined): McpEntry {
  return {
    command: launcher.node,
    args: [launcher.bin, "worker", "mcp", ...(repo === undefined ? [] : ["--repo", repo])],
  };
}

/** A word as a POSIX shell reads it: bare when it is safe, else single-quoted. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A shell command line that runs `engram ...words` with the launcher's node and bin. */
export function shellCommand(launcher: Launcher, words: readonly string[]): string {
  return [launcher.node, launcher.bin, ...words].map(shellWord).join(" ");
}

/** The hook events engram answers, as `worker hook EVENT` names them. */
export const HOOK_EVENTS = ["session-start", "pre-compact", "session-end"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/**
 * Whether a hook command line is one of engram's (any install path, any `--host`): what
 * --remove takes.
 */
export function isEngramHookCommand(command: unknown): boolean {
  return (
    typeof command === "string" &&
    /engram\.js'? worker hook (session-start|pre-compact|session-end)( --host [a-z-]+)?$/.test(
      command,
    )
  );
}
