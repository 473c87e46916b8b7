import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Caller, RepoOptions } from "../context/repo-context.js";
import { nearest } from "../core/model/nearest.js";
import { fileSystemError, UsageError } from "../errors.js";

export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  description: string;
  /** Shown in help as the value's name, e.g. FILE. */
  value?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** Options every command takes. */
export const COMMON_OPTIONS: OptionSpecs = {
  repo: {
    type: "string",
    value: "DIR",
    description: "repository directory (default: the current one)",
  },
  config: {
    type: "string",
    value: "FILE",
    description: "config file (default: <repo>/config/dev.toml)",
  },
  json: { type: "boolean", description: "print machine-readable JSON on stdout" },
  help: { type: "boolean", short: "h", description: "show this help" },
};

export interface Command<R = unknown> {
  name: string;
  summary: string;
  usage: string;
  options: OptionSpecs;
  /** How many positionals: [min, max]. */
  positionals?: [number, number];
  /** Runs in a git work tree that `director init` has not laid out (only `init` itself). */
  uninitialized?: boolean;
  /**
   * Finds its own repository, or needs none (`worker hook` outside a repository, `worker setup
   * --user`): the entry point neither looks for one nor requires `director init`.
   */
  anywhere?: boolean;
  /** Runs the command; returns the JSON result and the human text, and the exit code. */
  run(args: ParsedArgs): Promise<CommandOutput<R>>;
}

export interface CommandOutput<R = unknown> {
  json: R;
  text: string;
  exitCode?: number;
  /** Printed to stderr whatever the output format: what the user must not miss. */
  warnings?: string[];
}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** Set by the entry point: the command line, for notices while a command runs. */
  caller?: Caller | undefined;
}

export function parseCommandArgs(command: Command, argv: readonly string[]): ParsedArgs {
  const specs = { ...COMMON_OPTIONS, ...command.options };
  const options: Record<
    string,
    { type: "string" | "boolean"; multiple?: boolean; short?: string }
  > = {};
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = {
      type: spec.type,
      ...(spec.multiple ? { multiple: true } : {}),
      ...(spec.short ? { short: spec.short } : {}),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseProblem(error, Object.keys(specs)), {
      usage: `usage: ${command.usage}\n`,
    });
  }
  const values = parsed.values as ParsedArgs["values"];
  if (values.help) return { values, positionals: parsed.positionals };
  const [min, max] = command.positionals ?? [0, 0];
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    throw new UsageError(
      `expected ${min === max ? min : `${min} to ${max}`} argument(s), got ${parsed.positionals.length}`,
      { usage: `usage: ${command.usage}\n` },
    );
  }
  return { values, positionals: parsed.positionals };
}

/**
 * `parseArgs`' complaint in our words: the flag as typed, the nearest known one, and quotes
 * that pair up (Node's own message about '--' leaves one open).
 */
function parseProblem(error: unknown, names: readonly string[]): string {
  const message = String((error as Error)?.message ?? error);
  const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1];
  if (unknown !== undefined) {
    const typed = unknown.replace(/^-+/, "").split("=")[0] ?? "";
    const guess = nearest(typed, names);
    return `unknown option ${unknown}${guess === undefined ? "" : ` (did you mean --${guess}?)`}; an argument that starts with - goes after --`;
  }
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message)?.[1];
  if (missing !== undefined) return `${missing} needs a value`;
  const extra = /^Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(message)?.[1];
  if (extra !== undefined) return `${extra} takes no value`;
  return message;
}

export function helpText(command: Command): string {
  const specs = { ...command.options, ...COMMON_OPTIONS };
  const rows = Object.entries(specs).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.value ? ` ${spec.value}` : ""}`;
    return `  ${flag.padEnd(26)} ${spec.description}${spec.multiple ? " (repeatable)" : ""}`;
  });
  return `usage: ${command.usage}\n\n${command.summary}\n\noptions:\n${rows.join("\n")}\n`;
}

/** The repository and config file every command takes, for `openContext`. */
export function repoOptions(args: ParsedArgs): RepoOptions {
  return {
    repo: stringOption(args, "repo"),
    config: stringOption(args, "config"),
    caller: args.caller,
  };
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

export function listOption(args: ParsedArgs, name: string): string[] {
  const value = args.values[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

export function numberOption(args: ParsedArgs, name: string): number | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n))
    throw new UsageError(`--${name}: expected a number, got "${text}"`);
  return n;
}

/**
 * A file the user named, as an absolute path, checked before any work starts: a missing,
 * unreadable or folder path is a FileSystemError (exit 3) that names it as the user typed it.
 */
export function inputFile(given: string, shown = given): string {
  const path = resolve(given);
  try {
    if (statSync(path).isDirectory())
      throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw fileSystemError(error, shown, "read") ?? error;
  }
  return path;
}
