/** docs/cli.md agrees with the code: the command summary, the usage lines, exits and codes. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Command } from "../../src/cli/args.js";
import { DIRECTOR_COMMANDS } from "../../src/cli/director-commands.js";
import { WORKER_COMMANDS } from "../../src/cli/worker-commands.js";
import { ERROR_CODES, EXIT } from "../../src/errors.js";
import { ROOT } from "../support/bins.js";

const doc = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");

describe("docs/cli.md", () => {
  it("the command summary lists every command of both bins", () => {
    const block = /```\n(director [^\n]*)\n(worker [^\n]*)\n```/.exec(doc);
    expect(block, "the summary block").not.toBeNull();
    const words = (line: string) => new Set(line.split(/[\s|]+/));
    const director = words(block?.[1] ?? "");
    const worker = words(block?.[2] ?? "");
    for (const c of DIRECTOR_COMMANDS)
      expect(director.has(c.name), `director ${c.name}`).toBe(true);
    for (const c of WORKER_COMMANDS) expect(worker.has(c.name), `worker ${c.name}`).toBe(true);
  });

  it("every usage line names the command's own options (aliases aside)", () => {
    const check = (c: Command) => {
      if (c.usage.includes("[options]")) return;
      for (const [name, spec] of Object.entries(c.options)) {
        if (spec.description.startsWith("same as")) continue;
        expect(c.usage, `${c.usage}: --${name}`).toContain(`--${name}`);
      }
    };
    for (const c of [...DIRECTOR_COMMANDS, ...WORKER_COMMANDS]) check(c);
    const heartbeat = WORKER_COMMANDS.find((c) => c.name === "heartbeat");
    for (const flag of ["--main", "--worker", "--bus"]) expect(heartbeat?.usage).toContain(flag);
  });

  it("the exit-code table lists every exit status, and the code table every error code", () => {
    for (const [name, status] of Object.entries(EXIT)) {
      expect(doc, `exit ${status} (${name})`).toMatch(new RegExp(`\\n\\| ${status} \\| `));
    }
    for (const [code, { exit }] of Object.entries(ERROR_CODES)) {
      expect(doc, code).toContain(`| \`${code}\` | ${EXIT[exit]} |`);
    }
    for (const words of ["does not exist", "permission denied", "read-only", "no space"]) {
      expect(doc).toContain(words);
    }
  });
});
