/**
 * MEMORY.md makes no image and no disguised link from memory text (issue 40): a viewer fetches
 * an image's URL on sight, and a link's text can hide where it goes.
 */
import { describe, expect, it } from "vitest";
import { clean } from "../../src/core/rendering/focus-text.js";

describe("memory text in MEMORY.md", () => {
  it("neutralises markdown images and links", () => {
    expect(clean("see ![x](https://t.example/p.gif?d=1) now")).toBe(
      "see ![x]\\(https://t.example/p.gif?d=1) now",
    );
    expect(clean("[the docs](https://evil.example/)")).toBe("[the docs]\\(https://evil.example/)");
  });

  it("keeps brackets and parentheses that make no link", () => {
    expect(clean("arr[0] (see above) and [REDACTED:github-pat]")).toBe(
      "arr[0] (see above) and [REDACTED:github-pat]",
    );
  });
});
