/** Reading src/ as text for the structure tests: its files, their code and their imports. */
import { readdirSync } from "node:fs";
import { join, sep } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const SRC = join(ROOT, "src");

export function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

export const posix = (path: string) => path.split(sep).join("/");

/** The text of a module without its comments (strings kept: imports live in them). */
export function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Every import and re-export of a module: static, bare (`import "x"`) and dynamic. */
export function importsOf(text: string): { spec: string; names: string }[] {
  const out: { spec: string; names: string }[] = [];
  const source = code(text);
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s+([^;]*?)\s+from\s+"([^"]+)"/g)) {
    out.push({ spec: m[2] as string, names: m[1] as string });
  }
  for (const m of source.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g)) {
    out.push({ spec: m[1] as string, names: "" });
  }
  for (const m of source.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) {
    out.push({ spec: m[1] as string, names: "*" });
  }
  return out;
}
