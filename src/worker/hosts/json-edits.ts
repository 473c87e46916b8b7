import { InputError } from "../../errors.js";
import type { McpEntry } from "./launcher.js";

/** A JSON object as a host's settings file holds it. */
export type JsonObject = Record<string, unknown>;

/** An edit of one file's text: the new text (undefined: no file) and what changed, in words. */
export interface TextEdit {
  after: string | undefined;
  changes: string[];
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A settings file's object; a file that is not a JSON object is refused, naming it. */
export function parseJsonObject(text: string | undefined, file: string): JsonObject {
  if (text === undefined || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${file}: not valid JSON (${(error as Error).message}); fix or move the file, then run worker setup again: nothing was written`,
      file,
      "",
      { cause: error },
    );
  }
  if (!isObject(value)) {
    throw new InputError(
      `${file}: expected a JSON object at the top; nothing was written`,
      file,
      "",
    );
  }
  return value;
}

/** The object at `key`, refused (naming file and key) when it is there but not an object. */
function objectAt(parent: JsonObject, key: string, file: string, pointer: string): JsonObject {
  const value = parent[key];
  if (value === undefined) return {};
  if (!isObject(value)) {
    throw new InputError(
      `${file}: ${pointer} is not an object; fix it, then run worker setup again: nothing was written`,
      file,
      pointer,
    );
  }
  return value;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The text for `next`: the old text when nothing changed (a second run changes no byte, and
 * a hand-formatted file keeps its form), no file when nothing is left, else two-space JSON.
 */
export function jsonText(
  before: string | undefined,
  old: JsonObject,
  next: JsonObject,
): string | undefined {
  if (before !== undefined && deepEqual(old, next)) return before;
  if (Object.keys(next).length === 0) return undefined;
  return `${JSON.stringify(next, null, 2)}\n`;
}

/**
 * Adds (or, with `entry` undefined, takes out) the `engram` server of an `mcpServers` table,
 * keeping every other key and server. `table` is the key path to the servers' object.
 */
export function editMcpServers(
  before: string | undefined,
  file: string,
  entry: McpEntry | undefined,
): TextEdit {
  const old = parseJsonObject(before, file);
  const servers = { ...objectAt(old, "mcpServers", file, "/mcpServers") };
  const had = servers.engram;
  const next: JsonObject = { ...old };
  if (entry === undefined) {
    delete servers.engram;
  } else {
    servers.engram = { ...entry };
  }
  if (Object.keys(servers).length === 0) delete next.mcpServers;
  else next.mcpServers = servers;
  const changes: string[] = [];
  if (entry === undefined && had !== undefined) changes.push("mcpServers.engram removed");
  if (entry !== undefined && had === undefined) changes.push("mcpServers.engram added");
  if (entry !== undefined && had !== undefined && !deepEqual(had, servers.engram)) {
    changes.push("mcpServers.engram replaced");
  }
  return { after: jsonText(before, old, next), changes };
}

/**
 * One hook registration, in the shape Claude Code and Gemini CLI share: the event, its
 * matcher, the command and its timeout (the host's unit: seconds, Gemini CLI's milliseconds).
 */
export interface ClaudeHook {
  event: string;
  matcher?: string;
  command: string;
  /** Claude Code cuts a SessionEnd hook at 1.5 s unless it declares a timeout. */
  timeout: number;
}

/**
 * Merges engram's hooks into a Claude Code settings object (`hooks.EVENT[] = {matcher,
 * hooks: [{type, command, timeout}]}`): every hook `isOurs` recognises is taken out first,
 * then `hooks` are added, so a moved install is replaced, not doubled. Every other hook,
 * group and key stays as it was. With `hooks` empty, this is the removal.
 */
export function editClaudeHooks(
  before: string | undefined,
  file: string,
  hooks: readonly ClaudeHook[],
  isOurs: (command: unknown) => boolean,
): TextEdit {
  const old = parseJsonObject(before, file);
  const table = objectAt(old, "hooks", file, "/hooks");
  const nextTable: JsonObject = {};
  const removed: string[] = [];
  for (const [event, groups] of Object.entries(table)) {
    if (!Array.isArray(groups)) {
      throw new InputError(
        `${file}: /hooks/${event} is not a list; fix it, then run worker setup again: nothing was written`,
        file,
        `/hooks/${event}`,
      );
    }
    const kept: unknown[] = [];
    for (const group of groups) {
      const inner = isObject(group) && Array.isArray(group.hooks) ? group.hooks : undefined;
      if (inner === undefined) {
        kept.push(group);
        continue;
      }
      const others = inner.filter((h) => !(isObject(h) && isOurs(h.command)));
      if (others.length < inner.length) removed.push(event);
      if (others.length === inner.length) kept.push(group);
      else if (others.length > 0) kept.push({ ...group, hooks: others });
    }
    if (kept.length > 0) nextTable[event] = kept;
  }
  for (const hook of hooks) {
    const group: JsonObject = {
      ...(hook.matcher === undefined ? {} : { matcher: hook.matcher }),
      hooks: [{ type: "command", command: hook.command, timeout: hook.timeout }],
    };
    const list = (nextTable[hook.event] as unknown[] | undefined) ?? [];
    nextTable[hook.event] = [...list, group];
  }
  const next: JsonObject = { ...old };
  if (Object.keys(nextTable).length === 0) delete next.hooks;
  else next.hooks = nextTable;
  const after = jsonText(before, old, next);
  const changes: string[] = [];
  if (after !== before) {
    const added = hooks.map((h) => h.event);
    const dropped = removed.filter((e) => !added.includes(e));
    for (const event of added) changes.push(`hooks.${event}: engram's hook set`);
    for (const event of dropped) changes.push(`hooks.${event}: engram's hook removed`);
  }
  return { after, changes };
}
