import { parseArgs } from "node:util";
import { UsageError } from "../errors.js";

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
    throw new UsageError(`${(error as Error).message}\n\n${helpText(command)}`);
  }
  const values = parsed.values as ParsedArgs["values"];
  if (values.help) return { values, positionals: parsed.positionals };
  const [min, max] = command.positionals ?? [0, 0];
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    throw new UsageError(
      `expected ${min === max ? min : `${min} to ${max}`} argument(s), got ${parsed.positionals.length}\n\nusage: ${command.usage}`,
    );
  }
  return { values, positionals: parsed.positionals };
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
export function repoOptions(args: ParsedArgs): {
  repo: string | undefined;
  config: string | undefined;
} {
  return { repo: stringOption(args, "repo"), config: stringOption(args, "config") };
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
