/**
 * The scan compiles a rule at its first run, not when its set is built: a process that
 * redacts a few notes (every `worker emit`) pays for the rules their keywords name only.
 */
import { describe, expect, it } from "vitest";
import { buildRuleSet, findSpans } from "../../src/core/ingest/redact-scan.js";
import type { SecretRule } from "../../src/core/ingest/rules/types.js";

/** A rule whose pattern does not compile: it throws exactly when it is compiled. */
const BROKEN: SecretRule = { id: "broken", keywords: ["zqx"], pattern: "zqx(" };
const TOKEN: SecretRule = { id: "token", keywords: ["tok_"], pattern: "tok_[a-z]{8}" };

describe("rule sets compile their rules lazily", () => {
  it("builds a set holding a rule that does not compile, and runs the others", () => {
    const set = buildRuleSet([BROKEN, TOKEN]);
    expect(findSpans("plain prose, and tok_abcdefgh", set)).toEqual([
      { start: 17, end: 29, rank: 1 },
    ]);
    expect(set.tokens).toEqual(["[REDACTED:broken]", "[REDACTED:token]"]);
  });

  it("compiles a rule when a text holds its keyword", () => {
    const set = buildRuleSet([BROKEN, TOKEN]);
    expect(() => findSpans("here is zqx", set)).toThrow(SyntaxError);
  });
});
