import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "smol-toml";
import { ConfigError } from "../errors.js";
import type { Config } from "../schema/config.js";
import { CONFIG_SHAPE } from "../schema/config-shape.js";
import { shapedValue } from "../schema/shape.js";
import { keyLocator } from "./locate.js";
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
    text = await readFile(abs, "utf8");
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
    raw = parse(source);
  } catch {
    return undefined;
  }
  const config = shapedValue<Config>(CONFIG_SHAPE, raw);
  if (config === undefined) return undefined;
  if (crossFieldProblems(config, [], keyLocator(source)).length > 0) return undefined;
  return config;
}
