import path from "node:path";
import { parse } from "smol-toml";
import { ConfigError } from "../errors.js";
import { readText } from "../fs-async.js";
import type { Config } from "../schema/config.js";
import { CONFIG_SHAPE } from "../schema/config-shape.js";
import { shapedValue } from "../schema/shape.js";
import { type KeyLocator, keyLocator } from "./locate.js";
import { crossFieldProblems } from "./rules.js";

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file that was (or would have been) read. */
  path: string;
  /** False when the default file is missing and `config` is the defaults. */
  exists: boolean;
}

/**
 * Reads and validates the config. `configPath` defaults to `<repoDir>/config/dev.toml`; a
 * missing default file gives the defaults (exists: false); a missing explicit --config file
 * is a ConfigError. A relative `configPath` is resolved against the current directory and
 * shown as given in messages.
 */
export async function loadConfig(repoDir: string, configPath?: string): Promise<LoadedConfig> {
  const explicit = configPath !== undefined;
  const abs = explicit
    ? path.resolve(configPath)
    : path.join(path.resolve(repoDir), "config", "dev.toml");
  const display = explicit ? configPath : path.join("config", "dev.toml");
  let text: string;
  try {
    text = await readText(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !explicit) {
      return { config: await configOfText("", display), path: abs, exists: false };
    }
    const why =
      code === "ENOENT" ? "config file not found" : `cannot read config file (${code ?? err})`;
    throw new ConfigError(`${display}: ${why}`, display, [{ key: "", message: why }], {
      cause: err,
    });
  }
  return { config: await configOfText(text, display), path: abs, exists: true };
}

/**
 * A valid config is read without zod; anything else (or anything the quick check is not sure
 * of) goes through `parseConfigText`, which loads the zod schema and names every problem.
 */
export async function configOfText(text: string, file: string): Promise<Config> {
  const quick = quickConfig(text);
  if (quick !== undefined) return quick;
  const { parseConfigText } = await import("./parse.js");
  return parseConfigText(text, file);
}

/** The config of TOML text when it is valid and breaks no rule; `undefined` otherwise. */
export function quickConfig(text: string): Config | undefined {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let raw: unknown;
  try {
    raw = parse(withoutCommentLines(source));
  } catch {
    return undefined;
  }
  const config = shapedValue<Config>(CONFIG_SHAPE, raw);
  if (config === undefined) return undefined;
  // The lines are only looked up for a problem: most runs never scan for them.
  let locate: KeyLocator | undefined;
  const lazily: KeyLocator = (segments) => {
    locate ??= keyLocator(source);
    return locate(segments);
  };
  if (crossFieldProblems(config, [], lazily).length > 0) return undefined;
  return config;
}

/**
 * The text with each line that holds only a comment emptied (its line kept, for the numbers
 * in messages): a commented config such as `director init` writes is mostly comments, which
 * the TOML parser would read a character at a time on every command's start. Only when the
 * text has no multi-line string, inside which such a line would be text, and no control
 * character, which the parser must refuse wherever it stands.
 */
export function withoutCommentLines(text: string): string {
  if (text.includes('"""') || text.includes("'''") || CONTROL.test(text)) return text;
  return text.replace(/^[ \t]*#.*$/gm, "");
}

/**
 * TOML refuses control characters in comments too: such a text goes to the parser whole. (A
 * C1 control, which TOML allows, also sends it there: only slower.)
 */
const CONTROL = /[^\P{Cc}\t\n\r]/u;
