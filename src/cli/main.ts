import { findRepository, requireInitialized } from "../context/find-repo.js";
import { nearest } from "../core/model/nearest.js";
import { EXIT, UsageError } from "../errors.js";
import { type Command, helpText, parseCommandArgs, stringOption } from "./args.js";
import { reportError } from "./report.js";
import { writeStdout } from "./stdout.js";
import { terminalText } from "./terminal-text.js";

/** The exit statuses live with the errors (`src/errors.ts`); re-exported for the commands. */
export { EXIT };

/**
 * The one place that prints results and sets the exit status. Errors go through
 * `reportError`, the catch block every entry point shares.
 */
export async function runMain(
  program: string,
  commands: readonly Command[],
  argv: string[],
): Promise<void> {
  // Unattended: no git this process starts waits for a password typed on a terminal
  // (simple-git passes the user's GIT_* variables on; src/git/git-child.ts sets its own).
  process.env.GIT_TERMINAL_PROMPT ??= "0";
  const [name, ...rest] = argv;
  const json = argv.includes("--json");
  const overview = () => overviewOf(program, commands);
  if (name === undefined) {
    process.stderr.write(overview());
    process.exitCode = EXIT.usage;
    return;
  }
  const find = (wanted: string): Command => {
    const command = commands.find((c) => c.name === wanted);
    if (command) return command;
    const guess = nearest(
      wanted,
      commands.map((c) => c.name),
    );
    throw new UsageError(
      `unknown command '${wanted}'${guess ? ` (did you mean '${guess}'?)` : ""}`,
      { usage: overview() },
    );
  };
  const prefix = commands.some((c) => c.name === name) ? `${program} ${name}` : program;
  try {
    if (name === "--help" || name === "-h" || name === "help") {
      const topic = rest.find((a) => !a.startsWith("-"));
      writeStdout(topic === undefined ? overview() : helpText(find(topic)));
      return;
    }
    if (name === "--version") {
      writeStdout("engram 0.1.0\n");
      return;
    }
    if (name.startsWith("-"))
      throw new UsageError(`expected a command before ${name}`, { usage: overview() });
    const command = find(name);
    const args = parseCommandArgs(command, rest);
    if (args.values.help) {
      writeStdout(helpText(command));
      return;
    }
    // Like git: the enclosing work tree, never a folder invented on the way.
    if (!command.anywhere) {
      const repo = findRepository(stringOption(args, "repo"), process.cwd());
      if (!command.uninitialized) requireInitialized(repo, stringOption(args, "config"));
      args.values.repo = repo;
    }
    args.caller = {
      command: `${program} ${name}`,
      notice: (message) => process.stderr.write(`${prefix}: ${message}\n`),
    };
    const output = await command.run(args);
    // Text output holds memory, snippets and diffs: anyone's text, escaped for the terminal.
    writeStdout(args.values.json ? `${JSON.stringify(output.json)}\n` : terminalText(output.text));
    for (const warning of output.warnings ?? []) {
      process.stderr.write(`${prefix}: warning: ${terminalText(warning)}\n`);
    }
    process.exitCode = output.exitCode ?? EXIT.ok;
  } catch (error) {
    process.exitCode = reportError(prefix, error, json);
  }
}

function overviewOf(program: string, commands: readonly Command[]): string {
  const rows = commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join("\n");
  const more = `Run '${program} help <command>' or '${program} <command> --help' for a command's options.`;
  return `usage: ${program} <command> [options]\n\ncommands:\n${rows}\n\n${more}\n`;
}
