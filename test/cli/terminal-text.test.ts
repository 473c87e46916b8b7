/**
 * Control and bidirectional characters in memory reach no terminal (issue 40): `worker
 * recall` prints them escaped, as every text output does (one helper, `terminalText`).
 */
import { describe, expect, it } from "vitest";
import { terminalText } from "../../src/cli/terminal-text.js";
import { tomlConfig } from "../support/repo.js";
import { dir, expectExit, initRepo, useCliHarness, wrk } from "./cli-harness.js";

useCliHarness();

const HOSTILE = "retry deploy \u001b]0;pwned\u0007 then \u001b[31mred\u001b[0m \u202eevil\r";

describe("text printed to a terminal", () => {
  it("shows control and bidi characters as escapes, keeps lines and tabs", () => {
    expect(terminalText(HOSTILE)).toBe(
      "retry deploy \\u001b]0;pwned\\u0007 then \\u001b[31mred\\u001b[0m \\u202eevil\\u000d",
    );
    expect(terminalText("a\tb\nc ü ✓")).toBe("a\tb\nc ü ✓");
  });

  it("keeps a JSON text JSON: a hook's answer parses back to the same text", () => {
    const answer = { additionalContext: `memory: ${HOSTILE} \u0085 \u2066x\u2069` };
    const printed = terminalText(JSON.stringify(answer));
    for (const ch of ["\u202e", "\u0085", "\u2066"]) expect(printed).not.toContain(ch);
    expect(JSON.parse(printed)).toEqual(answer);
  });

  it("worker recall prints memory text escaped", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    const env = { SOURCE_DATE_EPOCH: "1767607200" };
    expectExit(await wrk(repo, ["emit", "--kind", "lesson", "--text", HOSTILE], { env }), 0);
    expectExit(await dir(repo, ["run", "--flush"], { env }), 0);
    const r = await wrk(repo, ["recall", "deploy"], { env });
    expectExit(r, 0);
    expect(r.stdout).toContain("\\u202eevil");
    for (const ch of ["\u001b", "\u0007", "\r", "\u202e"]) expect(r.stdout).not.toContain(ch);
  });
});
