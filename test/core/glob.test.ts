/**
 * The linear-time glob matcher: the same answers as the matchers it replaced (the registry's
 * regular expressions, fast-glob's picomatch) on small random inputs where those are fast,
 * and a bounded number of steps where they backtrack for ever.
 */

import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileGlob, GlobSyntaxError, MAX_BRACE_EXPANSIONS } from "../../src/core/glob.js";
import { entityMatcher } from "../../src/core/graph/entities.js";

/** fast-glob's matcher (picomatch 2, a dependency of fast-glob; it ships no types). */
const picomatch = createRequire(import.meta.url)("picomatch") as (
  glob: string,
  options?: { dot?: boolean },
) => (path: string) => boolean;

/** The registry's first matcher, a regular expression per glob (kept here as the oracle). */
function oldRegistryGlob(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      out += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += glob[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

const pieces = (alphabet: string[], max: number) =>
  fc.array(fc.constantFrom(...alphabet), { maxLength: max }).map((a) => a.join(""));

describe("compileGlob: registry dialect", () => {
  it("answers as the old regular expressions did (random globs and paths)", () => {
    const glob = pieces(["a", "b", "/", "*", "**", "**/", "?", ".", "(", "[", "\n"], 7);
    const path = pieces(["a", "b", "/", ".", "ab", "\n", "("], 9);
    fc.assert(
      fc.property(glob, path, (g, p) => {
        expect(compileGlob(g).test(p), `${JSON.stringify(g)} ~ ${JSON.stringify(p)}`).toBe(
          oldRegistryGlob(g).test(p),
        );
      }),
      { numRuns: 4000, seed: 0x61ab },
    );
  });

  it("keeps the documented cases", () => {
    expect(compileGlob("src/**/x.ts").test("src/x.ts")).toBe(true);
    expect(compileGlob("src/**/x.ts").test("src/a/b/x.ts")).toBe(true);
    expect(compileGlob("src/*.ts").test("src/a/b.ts")).toBe(false);
    expect(compileGlob("src/**").test("src/a/b.ts")).toBe(true);
    expect(compileGlob("a.b").test("axb")).toBe(false);
  });

  it("matches `*a*a*a...c` against a long path in bounded steps (a regular expression backtracks for ever)", () => {
    const glob = `${"*a".repeat(30)}*c`;
    const path = "a".repeat(5000);
    const meter = { steps: 0 };
    expect(compileGlob(glob).test(path, meter)).toBe(false);
    // (path length + 1) x (states + edges): linear in the path, never exponential.
    expect(meter.steps).toBeLessThan((path.length + 1) * (glob.length * 3 + 4));
    const slashes = `${"**/a".repeat(20)}/c`;
    const deep = "a/".repeat(2000);
    const meter2 = { steps: 0 };
    expect(compileGlob(slashes).test(deep, meter2)).toBe(false);
    expect(meter2.steps).toBeLessThan((deep.length + 1) * (slashes.length * 4 + 4));
  });
});

describe("registry areas", () => {
  it("a hostile area glob in config/registry.toml does not hang linking a long path", () => {
    const hostile = `${"*a".repeat(30)}*c`;
    const matcher = entityMatcher({
      people: [],
      projects: [{ id: "p", name: "P", aliases: [], paths: [hostile, "src/**"] }],
      components: [],
    });
    expect(matcher.areasOf("a".repeat(5000))).toEqual([]);
    expect(matcher.areasOf("src/a/b.ts")).toEqual(["project:p"]);
  });
});

describe("compileGlob: files dialect (markdown source folders)", () => {
  it("answers as fast-glob's picomatch does (random globs and relative paths)", () => {
    const glob = pieces(
      ["a", "b", "/", "*", "**", "**/", "/**", "?", ".", ".a", "{a,b}", "{a,.b/c}", "[ab]", "[^a]"],
      6,
    );
    const path = fc
      .array(
        pieces(["a", "b", ".", "c"], 3).filter((s) => s.length > 0),
        {
          minLength: 1,
          maxLength: 4,
        },
      )
      .map((names) => names.join("/"));
    fc.assert(
      fc.property(glob, path, (g, p) => {
        // Left out: what picomatch reads its own way and no markdown folder glob needs:
        // `.`/`..` names, globs that start or end with a slash, empty names, `**` inside a
        // name (a plain `*` for both, but picomatch then reads a trailing `/**` its own way).
        fc.pre(!/(^|\/)\.\.?(\/|$)/.test(p) && !/^\/|\/$|\/\//.test(g) && g.length > 0);
        fc.pre(!/\[\^a\]|\?/.test(g) || !/(^|\/)\./.test(p));
        fc.pre(g.split("/").every((name) => name === "**" || !name.includes("**")));
        const expected = picomatch(g, { dot: false })(p);
        expect(compileGlob(g, "files").test(p), `${JSON.stringify(g)} ~ ${JSON.stringify(p)}`).toBe(
          expected,
        );
      }),
      { numRuns: 4000, seed: 0x61ac },
    );
  });

  it("reads the usual folder globs", () => {
    const md = compileGlob("**/*.md", "files");
    expect(md.test("a.md")).toBe(true);
    expect(md.test("notes/2026/a.md")).toBe(true);
    expect(md.test(".hidden/a.md")).toBe(false);
    expect(md.test("notes/.a.md")).toBe(false);
    expect(compileGlob(".github/**/*.md", "files").test(".github/x/a.md")).toBe(true);
    expect(compileGlob("*.{md,mdx}", "files").test("a.mdx")).toBe(true);
    expect(compileGlob("notes/[0-9]*.md", "files").test("notes/7-days.md")).toBe(true);
    expect(compileGlob("notes/[0-9]*.md", "files").test("notes/x.md")).toBe(false);
    // `[!...]` negates, as in POSIX globs (picomatch 2 reads it as "! or ...", a bug).
    expect(compileGlob("a/[!b]c", "files").test("a/xc")).toBe(true);
    expect(compileGlob("a/[!b]c", "files").test("a/bc")).toBe(false);
    expect(compileGlob("./docs/*.md", "files").test("docs/a.md")).toBe(true);
    expect(compileGlob("a/\\*.md", "files").test("a/*.md")).toBe(true);
    expect(compileGlob("a/\\*.md", "files").test("a/b.md")).toBe(false);
  });

  it("refuses what it does not read, and brace bombs", () => {
    expect(() => compileGlob("!drafts/**", "files")).toThrow(GlobSyntaxError);
    expect(() => compileGlob("@(a|b)/*.md", "files")).toThrow(/extglobs/);
    const bomb = "{a,b}".repeat(7);
    expect(() => compileGlob(bomb, "files")).toThrow(
      new RegExp(`more than ${MAX_BRACE_EXPANSIONS}`),
    );
  });

  it("matches `*a*a*a...c` names in bounded steps", () => {
    const glob = `**/${"*a".repeat(30)}*c.md`;
    const path = `notes/${"a".repeat(250)}.md`;
    const meter = { steps: 0 };
    expect(compileGlob(glob, "files").test(path, meter)).toBe(false);
    expect(meter.steps).toBeLessThan((path.length + 1) * (glob.length * 3 + 12));
  });
});
