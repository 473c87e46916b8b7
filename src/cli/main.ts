import { EngramError } from "../errors.js";
import { type Command, helpText, parseCommandArgs } from "./args.js";

/** Exit codes shared by both command lines (documented in docs/cli.md). */
export const EXIT = { ok: 0, findings: 1, usage: 2, state: 3, internal: 70 } as const;

/**
 * The one place that prints results and sets the exit status. Errors the user can act on
 * (`EngramError`) print their message; anything else is a bug and prints its stack.
 */
export async function runMain(
  program: string,
  commands: readonly Command[],
  argv: string[],
): Promise<void> {
  const [name, ...rest] = argv;
  const overview = () =>
    `usage: ${program} <command> [options]\n\ncommands:\n${commands
      .map((c) => `  ${c.name.padEnd(10)} ${c.summary}`)
      .join("\n")}\n\nRun '${program} <command> --help' for a command's options.\n`;
  if (name === undefined) {
    process.stderr.write(overview());
    process.exitCode = EXIT.usage;
    return;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(overview());
    return;
  }
  if (name === "--version") {
    process.stdout.write("engram 0.1.0\n");
    return;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`${program}: unknown command '${name}'\n\n${overview()}`);
    process.exitCode = EXIT.usage;
    return;
  }
  const wantsJson = rest.includes("--json");
  try {
    const args = parseCommandArgs(command, rest);
    if (args.values.help) {
      process.stdout.write(helpText(command));
      return;
    }
    const output = await command.run(args);
    process.stdout.write(args.values.json ? `${JSON.stringify(output.json)}\n` : output.text);
    for (const warning of output.warnings ?? []) {
      process.stderr.write(`${program} ${name}: warning: ${warning}\n`);
    }
    process.exitCode = output.exitCode ?? EXIT.ok;
  } catch (error) {
    if (error instanceof EngramError) {
      if (wantsJson) {
        process.stdout.write(`${JSON.stringify({ error: error.name, message: error.message })}\n`);
      }
      process.stderr.write(`${program} ${name}: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    process.stderr.write(
      `${program} ${name}: internal error (a bug; please report it)\n${(error as Error).stack ?? error}\n`,
    );
    process.exitCode = EXIT.internal;
  }
}
