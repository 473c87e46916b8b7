#!/usr/bin/env node
/**
 * `engram director ...` and `engram worker ...`: one bin for hosts to name by absolute path
 * (`worker setup` writes it), dispatching to the two programs. Each program's command table
 * is imported only when named, so start-up stays as lean as the bins' own.
 */
import { enableCompileCache } from "./compile-cache.js";

// First, so that the compile cache covers every module loaded after it.
enableCompileCache();
const { EXIT, runMain } = await import("./main.js");

const USAGE =
  "usage: engram director|worker <command> [options]\n\n" +
  "  engram director <command>   the Director's commands (director --help)\n" +
  "  engram worker <command>     an agent's commands (worker --help)\n\n" +
  "Run 'engram director --help' or 'engram worker --help' for their commands.\n";

const [program, ...rest] = process.argv.slice(2);
if (program === "worker") {
  const { WORKER_COMMANDS } = await import("./worker-commands.js");
  await runMain("engram worker", WORKER_COMMANDS, rest);
} else if (program === "director") {
  const { DIRECTOR_COMMANDS } = await import("./director-commands.js");
  await runMain("engram director", DIRECTOR_COMMANDS, rest);
} else if (program === "--version") {
  process.stdout.write("engram 0.1.0\n");
} else if (program === "--help" || program === "-h" || program === "help") {
  process.stdout.write(USAGE);
} else {
  const said = program === undefined ? "" : `engram: unknown program '${program}'\n`;
  process.stderr.write(`${said}${USAGE}`);
  process.exitCode = EXIT.usage;
}
