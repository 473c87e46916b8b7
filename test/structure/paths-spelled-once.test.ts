/**
 * The catalog's and the focus view's paths are spelled in one source file,
 * src/core/model/paths.ts (`CATALOG_PATH`, `FOCUS_PATH`); every other module imports them.
 * A spelling is a string literal that is the path or a piece of it joined to make the path
 * (`"memory/catalog.json"`, `"catalog.json"`, `` `${MEMORY_DIR}/catalog.json` ``,
 * `"MEMORY.md"`). Comments, and messages and help texts that name a file for a reader
 * (`"is not listed in memory/catalog.json"`), are prose, not paths, and are not counted.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { code, posix, ROOT, SRC, walk } from "./source-tree.js";

const SPELLINGS: Record<string, RegExp> = {
  "memory/catalog.json": /(["'`])(?:memory\/)?catalog\.json\1|\/catalog\.json`/,
  "MEMORY.md": /(["'`])MEMORY\.md\1/,
};

function spells(text: string, path: string): boolean {
  return (SPELLINGS[path] as RegExp).test(code(text));
}

describe("memory paths spelled once", () => {
  const sources = walk(SRC).map((file) => [file, readFileSync(file, "utf8")] as const);

  for (const path of Object.keys(SPELLINGS)) {
    it(`${path} only in src/core/model/paths.ts`, () => {
      const files = sources
        .filter(([, text]) => spells(text, path))
        .map(([file]) => posix(relative(ROOT, file)));
      expect(files).toEqual(["src/core/model/paths.ts"]);
    });
  }

  it("counts a literal or a joined piece, not a comment or a message", () => {
    const catalog = "memory/catalog.json";
    expect(spells('files.get("memory/catalog.json")', catalog)).toBe(true);
    expect(spells('join(dir, "memory", "catalog.json")', catalog)).toBe(true);
    // A template literal's placeholder, spelled in two pieces so that it stays text here.
    expect(spells(`const CATALOG = \`$${"{MEMORY_DIR}"}/catalog.json\`;`, catalog)).toBe(true);
    expect(spells('join(repoDir, "MEMORY.md")', "MEMORY.md")).toBe(true);
    expect(spells("// reads memory/catalog.json", catalog)).toBe(false);
    expect(spells('add(p, "x", "is not listed in memory/catalog.json")', catalog)).toBe(false);
    expect(spells('"engram://MEMORY.md"', "MEMORY.md")).toBe(false);
  });
});
