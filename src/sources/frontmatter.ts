import { parse as parseYaml } from "yaml";
import type { Frontmatter } from "../core/sync/markdown.js";

/**
 * YAML frontmatter of markdown memory files, read with the `yaml` package (an adapter: the
 * core receives the parsed values).
 */

export interface ParsedFrontmatter extends Frontmatter {
  /** Why the frontmatter was not used (missing or malformed); the body still syncs. */
  warning: string | null;
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/m;

/** Splits `---` YAML frontmatter from the body; malformed or missing frontmatter is a warning. */
export function parseFrontmatter(text: string): ParsedFrontmatter {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = OPEN.exec(source);
  if (open === null) return { data: {}, body: source, warning: "no YAML frontmatter" };
  const rest = source.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) {
    return { data: {}, body: source, warning: "frontmatter has no closing ---; read as body" };
  }
  const yaml = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  let data: unknown;
  try {
    data = parseYaml(yaml);
  } catch (error) {
    // The YAML library counts lines from the frontmatter's first line: name the file's line.
    const message = ((error as Error).message.split("\n")[0] ?? "unreadable").replace(
      / at line \d+, column \d+:?$/,
      "",
    );
    const pos = (error as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    const where = pos !== undefined ? `line ${pos.line + 1}, column ${pos.col}: ` : "";
    return { data: {}, body, warning: `malformed YAML frontmatter: ${where}${message}` };
  }
  if (data === null || data === undefined) return { data: {}, body, warning: null };
  if (typeof data !== "object" || Array.isArray(data)) {
    return { data: {}, body, warning: "frontmatter is not a mapping of keys; ignored" };
  }
  return { data: data as Record<string, unknown>, body, warning: null };
}
