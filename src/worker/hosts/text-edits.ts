import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { FOCUS_PATH } from "../../core/model/paths.js";
import { InputError } from "../../errors.js";
import type { TextEdit } from "./json-edits.js";
import { type Launcher, shellCommand } from "./launcher.js";

const BEGIN =
  "<!-- engram:begin (written by worker setup; worker setup HOST --remove takes it out) -->";
const BEGIN_LINE = /^<!-- engram:begin\b.*-->\s*$/;
const END = "<!-- engram:end -->";
const END_LINE = /^<!-- engram:end -->\s*$/;

/**
 * What an agent does with shared memory, as the README's agent loop says it, with every
 * command spelled with absolute paths: an agent's shell may not have engram's bins on PATH.
 */
export function memoryInstructions(launcher: Launcher): string {
  const cmd = (...words: string[]) => shellCommand(launcher, words);
  const check = cmd("worker", "check");
  return [
    "## Shared memory (engram)",
    `At the start of every session run \`${check} && cat MEMORY.md\`, and read what it prints.`,
    `- If the check says \`sync required\`, run \`${cmd("worker", "sync")}\`, then run the check again.`,
    "- If it says `memory not committed`, run the `git add memory MEMORY.md && git commit` it prints, then run the check again.",
    "- If it fails otherwise, stop and report what it printed: memory is missing or was edited.",
    `- Before working on a topic, run \`${cmd("worker", "recall")} "<topic>"\` for what the team knows about it (or the \`memory_recall\` tool of the \`engram\` MCP server).`,
    `- When you learn something worth keeping, record it: \`${cmd("worker", "emit")} --kind lesson --text "..." --topic <topic>\` (or decision, fact, convention; or the \`memory_emit\` tool).`,
    `- Never edit \`memory/\` or \`${FOCUS_PATH}\` by hand: the Director regenerates them.`,
  ].join("\n");
}

/** The line range [begin, end] of engram's block, refusing a begin without its end. */
function blockRange(lines: readonly string[], file: string): [number, number] | undefined {
  const begin = lines.findIndex((l) => BEGIN_LINE.test(l));
  const end = lines.findIndex((l, i) => i > begin && END_LINE.test(l));
  if (begin === -1) {
    if (lines.some((l) => END_LINE.test(l))) {
      throw new InputError(
        `${file}: an engram:end marker without its engram:begin; fix the markers by hand, then run worker setup again: nothing was written`,
        file,
        "",
      );
    }
    return undefined;
  }
  if (end === -1) {
    throw new InputError(
      `${file}: an engram:begin marker (line ${begin + 1}) without its engram:end; fix the markers by hand, then run worker setup again: nothing was written`,
      file,
      "",
    );
  }
  return [begin, end];
}

/**
 * Puts `body` between engram's markers in a Markdown file (AGENTS.md, GEMINI.md), replacing
 * an earlier block in place or appending one after a blank line; with `body` undefined, takes
 * the block (and the blank line before it) out. Everything else stays byte for byte.
 */
export function editMarkdownBlock(
  before: string | undefined,
  file: string,
  body: string | undefined,
): TextEdit {
  const text = before ?? "";
  const lines = text.split("\n");
  const range = blockRange(lines, file);
  const block = body === undefined ? [] : [BEGIN, ...body.split("\n"), END];
  let after: string | undefined;
  if (range !== undefined) {
    const [begin, end] = range;
    const head = lines.slice(0, begin);
    const tail = lines.slice(end + 1);
    if (body === undefined) {
      if (head.length > 0 && (head[head.length - 1] as string).trim() === "") head.pop();
      after = [...head, ...tail].join("\n");
    } else {
      after = [...head, ...block, ...tail].join("\n");
    }
  } else if (body === undefined) {
    after = before;
  } else {
    const trimmed = text.replace(/\n+$/, "");
    after = `${trimmed === "" ? "" : `${trimmed}\n\n`}${block.join("\n")}\n`;
  }
  if (after !== undefined && after.trim() === "") after = undefined;
  if (after === before) return { after, changes: [] };
  const changes =
    body === undefined
      ? ["engram's memory block removed"]
      : [range === undefined ? "engram's memory block added" : "engram's memory block replaced"];
  return { after, changes };
}

/** Cursor's always-applied project rule: YAML front matter, then the instructions. */
export function cursorRule(launcher: Launcher): string {
  const front = stringifyYaml({
    description: "Shared team memory (engram): check it, read MEMORY.md, recall and record",
    alwaysApply: true,
  });
  return `---\n${front}---\n${memoryInstructions(launcher)}\n`;
}

/**
 * Writes (or, with `wanted` undefined, removes) Cursor's engram rule, a file engram owns
 * whole. An existing rule whose front matter is not YAML is refused, naming it.
 */
export function editCursorRule(
  before: string | undefined,
  file: string,
  wanted: string | undefined,
): TextEdit {
  if (before !== undefined) {
    const front = /^---\n([\s\S]*?)\n---\n/.exec(before)?.[1];
    try {
      if (front === undefined) throw new Error("no front matter between --- lines");
      parseYaml(front);
    } catch (error) {
      throw new InputError(
        `${file}: its front matter does not parse (${(error as Error).message.split("\n")[0]}); move the file away, then run worker setup again: nothing was written`,
        file,
        "",
        { cause: error },
      );
    }
  }
  if (wanted === before) return { after: before, changes: [] };
  if (wanted === undefined) return { after: undefined, changes: ["rule removed"] };
  return { after: wanted, changes: [before === undefined ? "rule added" : "rule replaced"] };
}
