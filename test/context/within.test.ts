/**
 * Inside or outside a folder, by path segments: a name that only starts with two dots
 * (`..ci`, `..engram`) is inside; `..` and what is under it are not.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isWithin, shownPath } from "../../src/context/within.js";

const repo = join("/", "work", "repo");

describe("isWithin", () => {
  it.each([
    [repo, true],
    [join(repo, "..ci", "engram.toml"), true],
    [join(repo, "..engram"), true],
    [join(repo, "config", "dev.toml"), true],
    [join(repo, ".."), false],
    [join(repo, "..", "other", "engram.toml"), false],
    [join("/", "elsewhere"), false],
  ])("%s is inside: %s", (path, inside) => {
    expect(isWithin(repo, path)).toBe(inside);
  });

  it("shows a path inside relative, one outside absolute", () => {
    expect(shownPath(repo, join(repo, "..ci", "x.toml"))).toBe(join("..ci", "x.toml"));
    expect(shownPath(repo, repo)).toBe(".");
    expect(shownPath(repo, join(repo, "..", "x"))).toBe(join("/", "work", "x"));
  });
});
