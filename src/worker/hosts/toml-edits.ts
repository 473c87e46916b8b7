import { parse, stringify, TomlError } from "smol-toml";
import { InputError } from "../../errors.js";
import type { TextEdit } from "./json-edits.js";
import type { McpEntry } from "./launcher.js";

/** `[mcp_servers.engram]` or one of its sub-tables (`[mcp_servers.engram.env]`). */
const ENGRAM_HEADER =
  /^\s*\[\s*mcp_servers\s*\.\s*("engram"|'engram'|engram)\s*(\.[^\]]*)?\]\s*(#.*)?$/;
const ANY_HEADER = /^\s*\[/;
const BLANK_OR_COMMENT = /^\s*(#.*)?$/;

function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    const where =
      error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : "";
    const first = String((error as Error).message).split("\n")[0];
    throw new InputError(
      `${file}: not valid TOML${where} (${first}); fix the file, then run worker setup again: nothing was written`,
      file,
      "",
      { cause: error },
    );
  }
}

function engramOf(parsed: Record<string, unknown>): unknown {
  const servers = parsed.mcp_servers as Record<string, unknown> | undefined;
  return servers?.engram;
}

/** The line range [start, end) of engram's tables, without the comments and blanks after. */
function engramSection(lines: readonly string[]): [number, number] | undefined {
  const start = lines.findIndex((l) => ENGRAM_HEADER.test(l));
  if (start === -1) return undefined;
  let end = start + 1;
  while (end < lines.length) {
    const line = lines[end] as string;
    if (ANY_HEADER.test(line) && !ENGRAM_HEADER.test(line)) break;
    end++;
  }
  while (end > start + 1 && BLANK_OR_COMMENT.test(lines[end - 1] as string)) end--;
  return [start, end];
}

/**
 * Sets (or, with `entry` undefined, takes out) `[mcp_servers.engram]` in a Codex
 * `config.toml`, editing its text so every other table, key and comment stays byte for byte.
 * The result is parsed again: an engram server written in a form this does not edit (an
 * inline table, dotted keys) is refused rather than doubled.
 */
export function editCodexConfig(
  before: string | undefined,
  file: string,
  entry: McpEntry | undefined,
): TextEdit {
  const text = before ?? "";
  const had = engramOf(parseToml(text, file));
  const lines = text.split("\n");
  const section = engramSection(lines);
  const unlike = () =>
    new InputError(
      `${file}: mcp_servers.engram is written in a form worker setup does not edit (an inline table or dotted keys); change it to a [mcp_servers.engram] table or remove it by hand: nothing was written`,
      file,
      "/mcp_servers/engram",
    );
  if (had !== undefined && section === undefined) throw unlike();
  const wanted =
    entry === undefined
      ? []
      : stringify({ mcp_servers: { engram: entry } })
          .trimEnd()
          .split("\n");
  let nextLines: string[];
  if (section !== undefined) {
    const [start, end] = section;
    const tail = lines.slice(end);
    const head = lines.slice(0, start);
    if (entry === undefined && tail.every((l) => l.trim() === "")) {
      // Taken out at the end: the blank line that set it apart goes with it.
      while (head.length > 0 && (head[head.length - 1] as string).trim() === "") head.pop();
      nextLines = head.length === 0 ? [] : [...head, ""];
    } else {
      nextLines = [...head, ...wanted, ...tail];
    }
  } else if (entry === undefined) {
    nextLines = lines;
  } else {
    const body = text.replace(/\s+$/, "");
    nextLines = body === "" ? [...wanted, ""] : [...body.split("\n"), "", ...wanted, ""];
  }
  let after: string | undefined = nextLines.join("\n");
  if (after.trim() === "") after = before === undefined || entry === undefined ? undefined : after;
  let now: unknown;
  try {
    now = engramOf(parse(after ?? ""));
  } catch {
    throw unlike();
  }
  const ok =
    entry === undefined
      ? now === undefined
      : JSON.stringify(now) === JSON.stringify({ command: entry.command, args: entry.args });
  if (!ok) throw unlike();
  if (after === before) return { after, changes: [] };
  const changes =
    entry === undefined
      ? had === undefined
        ? []
        : ["[mcp_servers.engram] removed"]
      : [had === undefined ? "[mcp_servers.engram] added" : "[mcp_servers.engram] replaced"];
  return { after, changes };
}
