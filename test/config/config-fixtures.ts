import { expect } from "vitest";
import { parseConfigText } from "../../src/config/parse.js";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { defaultConfig } from "../../src/schema/config.js";

/** Helpers of the config tests: parse a text and get its ConfigError, every key of the schema. */

export const FILE = "config/dev.toml";

/** The ConfigError that parsing `lines` throws. */
export function errorOf(lines: string[] | string): ConfigError {
  const text = Array.isArray(lines) ? `${lines.join("\n")}\n` : lines;
  try {
    parseConfigText(text, FILE);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

export function problemsOf(lines: string[] | string): ConfigProblem[] {
  return [...errorOf(lines).problems];
}

/** Every dotted key of the schema, from a parsed default config. */
export function allKeys(): string[] {
  const out: string[] = [];
  const walk = (v: unknown, at: string[]): void => {
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [k, child] of Object.entries(v)) walk(child, [...at, k]);
    } else out.push(at.join("."));
  };
  walk(defaultConfig(), []);
  return out;
}
