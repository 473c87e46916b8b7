/** A later decision reversing or restating an earlier one supersedes it (pure). */
import { describe, expect, it } from "vitest";
import { classifyHistory } from "../../src/core/history/git-events.js";
import { optionTerms, supersessions } from "../../src/core/history/supersede.js";

describe("supersession of history decisions", () => {
  it("finds the option-like terms a title names", () => {
    expect(optionTerms("restore `sign-commits` default and the --dry-run flag")).toEqual([
      "sign-commits",
      "dry-run",
    ]);
    expect(optionTerms("rename keep_ssfi to lockSsfi")).toEqual(["keep_ssfi", "lockssfi"]);
    expect(optionTerms("Drop support for node 16")).toEqual([]);
  });

  it("a later default of the same option, or a restore, supersedes; unrelated ones do not", () => {
    const d = (sha: string, title: string, pr?: number) => ({
      sha,
      title,
      ...(pr !== undefined ? { pr } : {}),
    });
    const found = supersessions([
      d("a", "sign-commits should default to true"),
      d("b", "Document sign-commits"),
      d("c", "default sign-commits to false"),
      d("d", "Deprecate `fast-mode`"),
      d("e", "Un-deprecate `fast-mode`"),
      d("f", "Add `fast-mode` docs"),
      d("g", "Use `fast-mode` by default", 9),
      d("h", "Restore `fast-mode` default", 9),
    ]);
    // h restores, but not g of its own pull request: the newest other one on the term.
    expect(Object.fromEntries(found)).toEqual({ 2: 0, 4: 3, 7: 5 });
  });

  it("names the superseded decision in the later one's rationale, both kept", () => {
    const read = classifyHistory([
      {
        sha: "a1",
        message: "fix: the sign-commits option should default to false\n\nSigning needs a key.",
      },
      { sha: "b2", message: "Add a parser" },
      { sha: "c3", message: "fix: restore the sign-commits default (true)\n\nUsers relied on it." },
    ]);
    expect(read[0]?.cls.decision?.title).toBe("the sign-commits option should default to false");
    expect(read[2]?.supersedes).toEqual({
      sha: "a1",
      title: "the sign-commits option should default to false",
    });
    expect(read[2]?.cls.decision?.rationale).toBe(
      'Supersedes "the sign-commits option should default to false" (a1). Users relied on it.',
    );
  });
});
