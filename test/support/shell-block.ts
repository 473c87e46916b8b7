import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHILD_SAFETY_MS, childEnv, DIRECTOR_BIN, WORKER_BIN } from "./bins.js";

/**
 * The commands of a shell code block as a person would type them: comment and blank lines
 * dropped, `\` continuations joined, a here-document kept with its command.
 */
export function shellCommands(block: string): string[] {
  const commands: string[] = [];
  let current: string | undefined;
  let terminator: string | undefined;
  for (const line of block.split("\n")) {
    if (terminator !== undefined) {
      current = `${current}\n${line}`;
      if (line === terminator) {
        commands.push(current);
        current = undefined;
        terminator = undefined;
      }
      continue;
    }
    if (current === undefined) {
      if (line.trim() === "" || line.trim().startsWith("#")) continue;
      current = line;
    } else {
      current = `${current}\n${line}`;
    }
    const heredoc = /<<-?'?(\w+)'?/.exec(line);
    if (heredoc) {
      terminator = heredoc[1];
      continue;
    }
    if (current.endsWith("\\")) continue;
    commands.push(current);
    current = undefined;
  }
  if (current !== undefined) commands.push(current);
  return commands;
}

/** The body of the first ```sh block after `heading` in a Markdown text. */
export function shellBlockAfter(markdown: string, heading: string): string {
  const at = markdown.indexOf(heading);
  if (at === -1) throw new Error(`no "${heading}" in the text`);
  const open = markdown.indexOf("```sh\n", at);
  const close = markdown.indexOf("\n```", open + 6);
  if (open === -1 || close === -1) throw new Error(`no sh block after "${heading}"`);
  return markdown.slice(open + 6, close + 1);
}

/**
 * A folder with `director` and `worker` commands that run the built bins, as `npm link`
 * puts them on a user's PATH.
 */
export function linkBins(dir: string): string {
  for (const [name, bin] of [
    ["director", DIRECTOR_BIN],
    ["worker", WORKER_BIN],
  ] as const) {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

export interface ShellOptions {
  cwd: string;
  home: string;
  binDir?: string;
}

function shellEnv(options: ShellOptions): NodeJS.ProcessEnv {
  return childEnv({
    HOME: options.home,
    XDG_CONFIG_HOME: undefined,
    GIT_CONFIG_GLOBAL: undefined,
    PATH: [options.binDir, process.env.PATH].filter(Boolean).join(":"),
  });
}

export interface ShellStep {
  command: string;
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs each command in its own `bash -c` in `cwd` (what one command leaves behind is files,
 * as when a person types them one after the other), with `HOME` set to `home`, `PATH`
 * starting with `binDir`, and the tests' git identity. Stops at the first failure.
 */
export function runShellSteps(commands: readonly string[], options: ShellOptions): ShellStep[] {
  const env = shellEnv(options);
  const steps: ShellStep[] = [];
  for (const command of commands) {
    const r = spawnSync("bash", ["-c", command], {
      cwd: options.cwd,
      env,
      encoding: "utf8",
      timeout: CHILD_SAFETY_MS,
    });
    steps.push({ command, status: r.status, stdout: r.stdout, stderr: r.stderr });
    if (r.status !== 0) break;
  }
  return steps;
}

/** A failed step, for an assertion message. */
export function describeStep(step: ShellStep | undefined): string {
  if (step === undefined) return "no step ran";
  return `$ ${step.command}\nexit ${step.status}\nstdout: ${step.stdout.slice(-2000)}\nstderr: ${step.stderr.slice(-2000)}`;
}

/**
 * Runs the commands in one bash, one after the other, as typed in one terminal (a `cd`
 * carries over); stops at the first that exits non-zero and names it on stderr.
 */
export function runShellSession(commands: readonly string[], options: ShellOptions): ShellStep {
  const script = commands
    .map(
      (command, i) =>
        `${command}\nrc=$?; if [ $rc -ne 0 ]; then echo "command ${i + 1} exited $rc" >&2; exit $rc; fi`,
    )
    .join("\n");
  const r = spawnSync("bash", ["-c", script], {
    cwd: options.cwd,
    env: shellEnv(options),
    encoding: "utf8",
    timeout: CHILD_SAFETY_MS,
  });
  return { command: script, status: r.status, stdout: r.stdout, stderr: r.stderr };
}
