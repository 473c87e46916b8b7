import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, TomlError } from "smol-toml";
import { REGISTRY_PATH } from "../core/model/paths.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { EMPTY_REGISTRY } from "../schema/empty-registry.js";
import { Registry } from "../schema/registry.js";

/** The registry, or an empty one when the file does not exist; errors name file, line and field. */
export function loadRegistry(repoDir: string): Registry {
  const path = join(repoDir, REGISTRY_PATH);
  if (!existsSync(path)) return EMPTY_REGISTRY;
  return parseRegistry(readFileSync(path, "utf8"), REGISTRY_PATH);
}

export function parseRegistry(text: string, file: string): Registry {
  let raw: unknown;
  try {
    raw = parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const what = (err.message.split("\n")[0] ?? "").replace(/^Invalid TOML document:\s*/, "");
    throw problemsError(file, [{ key: "", line: err.line, message: `TOML syntax error: ${what}` }]);
  }
  const result = Registry.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue): ConfigProblem => {
    const [table, index] = issue.path;
    const line =
      typeof table === "string" && typeof index === "number"
        ? tableLine(text, table, index)
        : undefined;
    return {
      key: issue.path.join("."),
      ...(line !== undefined ? { line } : {}),
      message: issue.message,
    };
  });
  throw problemsError(file, problems);
}

/** The line of the `index`-th `[[table]]` header. */
function tableLine(text: string, table: string, index: number): number | undefined {
  let seen = -1;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (
      new RegExp(`^\\s*\\[\\[\\s*${table}\\s*\\]\\]`).test(lines[i] as string) &&
      ++seen === index
    )
      return i + 1;
  }
  return undefined;
}

function problemsError(file: string, problems: ConfigProblem[]): ConfigError {
  const lines = problems.map((p) => {
    const where = p.line === undefined ? file : `${file}:${p.line}`;
    return p.key === "" ? `${where}: ${p.message}` : `${where}: ${p.key}: ${p.message}`;
  });
  return new ConfigError(lines.join("\n"), file, problems);
}
