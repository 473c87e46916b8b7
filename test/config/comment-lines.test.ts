import fc from "fast-check";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { quickConfig, withoutCommentLines } from "../../src/config/load.js";
import { parseConfigText } from "../../src/config/parse.js";
import { renderDefaultConfig } from "../../src/config/render.js";

describe("withoutCommentLines: a config's comment lines skipped before the TOML parser", () => {
  it("reads the config director init writes as the full parser does, line numbers kept", () => {
    const text = renderDefaultConfig().replace(
      /^engram_max_bytes = \d+/m,
      "engram_max_bytes = 4096 # set here",
    );
    const stripped = withoutCommentLines(text);
    expect(stripped.length).toBeLessThan(text.length / 2);
    expect(stripped.split("\n")).toHaveLength(text.split("\n").length);
    expect(quickConfig(text)).toEqual(parseConfigText(text, "config/dev.toml"));
    expect(quickConfig(text)?.memory.engram_max_bytes).toBe(4096);
  });

  it("leaves a text with a multi-line string or a control character to the parser whole", () => {
    const multi = '[sync.notion]\ntitle = """\n# not a comment\n"""\n';
    expect(withoutCommentLines(multi)).toBe(multi);
    expect(withoutCommentLines("# a bell \u0007\n")).toBe("# a bell \u0007\n");
    expect(() => parse("# a bell \u0007\n")).toThrow();
  });

  it("never changes what a valid document means", () => {
    const line = fc.oneof(
      fc.constantFrom("# note", "  # indented", "a = 1", 'b = "x # y"', "c = [", "  1, # one", "]"),
      fc.constantFrom("[t]", "d = 'e'", "\t# tab", ""),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => {
        const text = `${lines.join("\n")}\n`;
        let parsed: unknown;
        try {
          parsed = parse(text);
        } catch {
          return; // not TOML: the parser's own verdict stands (stripping only skips comments)
        }
        expect(parse(withoutCommentLines(text))).toEqual(parsed);
      }),
    );
  });
});
