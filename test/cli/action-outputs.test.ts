import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionOutputs, formatOutputs, summaryInput } from "../../src/cli/action-outputs.js";
import {
  assertBuilt,
  DIRECTOR_BIN,
  describeResult,
  ROOT,
  runBin,
  WORKER_BIN,
} from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const ACTION_OUTPUTS_BIN = join(ROOT, "dist", "src", "cli", "action-outputs.js");
const HASH = `sha256:${"c".repeat(64)}`;

/** Reads `$GITHUB_OUTPUT` as the runner does: `name=value` lines and `name<<DELIM` blocks. */
function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name, delimiter] = heredoc as unknown as [string, string, string];
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delimiter; i++) value.push(lines[i] as string);
      if (i >= lines.length) throw new Error(`unterminated ${name}`);
      out[name] = value.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`bad line ${JSON.stringify(line)}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

const RUN_RESULT = {
  catalog_version: 8,
  catalog_hash: HASH,
  changed: true,
  compacted_events: 12,
  engrams_written: 3,
  engrams_promoted: 1,
  engrams_evicted: 2,
  tiers: { st: { files: 5, bytes: 5_000 }, lt: { files: 1, bytes: 900 } },
  pr: { number: 17, url: "https://github.com/o/r/pull/17" },
};

const STATUS = {
  catalog: { version: 8, hash: HASH, entries: 6, created_at: "2025-01-01T00:00:00.000Z" },
  tiers: {
    st: { files: 5, bytes: 5_000, max_files: 64, max_bytes: 262_144 },
    lt: { files: 1, bytes: 900, max_files: 256, max_bytes: 1_048_576 },
  },
};

describe("actionOutputs", () => {
  it("takes the PR and the catalog from director run --pr --json", () => {
    expect(actionOutputs(RUN_RESULT)).toEqual({
      "pr-number": "17",
      "pr-url": "https://github.com/o/r/pull/17",
      "catalog-version": "8",
      "catalog-hash": HASH,
      ok: "",
    });
    expect(actionOutputs({ ...RUN_RESULT, pr: null })["pr-number"]).toBe("");
  });

  it("reads guard, worker check and status results, and survives odd input", () => {
    expect(actionOutputs({ ok: false, findings: [] })).toMatchObject({
      ok: "false",
      "catalog-version": "",
    });
    expect(actionOutputs(STATUS)).toMatchObject({ "catalog-version": "8", "catalog-hash": HASH });
    // One field of a wrong type does not hide the others.
    expect(actionOutputs({ ...RUN_RESULT, pr: "nope", tiers: 3 })).toMatchObject({
      "pr-number": "",
      "catalog-version": "8",
    });
    for (const odd of [null, 3, "x", [], { catalog_version: -1 }]) {
      expect(actionOutputs(odd)["catalog-version"]).toBe("");
    }
  });
});

describe("formatOutputs", () => {
  it("writes name=value, and the heredoc form for a value with a line break", () => {
    expect(formatOutputs({ a: "1", b: "x\ny" }, "ghadelimiter_X")).toBe(
      "a=1\nb<<ghadelimiter_X\nx\ny\nghadelimiter_X\n",
    );
    expect(() => formatOutputs({ b: "x\nD\ny" }, "D")).toThrow(/delimiter/);
    expect(() => formatOutputs({ "bad name": "x" }, "D")).toThrow(/output name/);
  });

  it("reads back to the same values", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), fc.string()),
        (outputs) => {
          const clean = Object.fromEntries(
            Object.entries(outputs).map(([k, v]) => [k, v.replace(/\r/g, "")]),
          );
          expect(parseOutputFile(formatOutputs(clean, "ghadelimiter_abc"))).toEqual(clean);
        },
      ),
    );
  });
});

describe("summaryInput", () => {
  it("combines the run's tiers with the budgets of director status", () => {
    const input = summaryInput(RUN_RESULT, STATUS);
    expect(input).toMatchObject({
      catalog_version: 8,
      tiers: RUN_RESULT.tiers,
      budgets: { st_max_files: 64, lt_max_total_bytes: 1_048_576 },
      compacted_events: 12,
      pr: { number: 17 },
    });
    expect(summaryInput(RUN_RESULT)).toBeUndefined();
  });
});

describe("action-outputs (the built script)", () => {
  const temp = new TempDirs();
  let repo: TempRepo;

  beforeAll(async () => {
    assertBuilt();
    repo = temp.repo();
    const init = await runBin(DIRECTOR_BIN, ["init", "--json"], { cwd: repo.dir });
    if (init.code !== 0) throw new Error(describeResult(init));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "init"]);
  });
  afterAll(() => temp.cleanup());

  function files(): { dir: string; output: string; summary: string } {
    const dir = temp.dir();
    const output = join(dir, "output");
    const summary = join(dir, "summary");
    writeFileSync(output, "earlier=kept\n");
    writeFileSync(summary, "");
    return { dir, output, summary };
  }

  it("appends the outputs of a real worker check and a budget table from director status", async () => {
    const f = files();
    const check = await runBin(WORKER_BIN, ["check", "--json"], { cwd: repo.dir });
    const checkJson = JSON.parse(check.stdout) as { catalog_hash: string; ok: boolean };
    const result = join(f.dir, "result.json");
    writeFileSync(result, check.stdout);
    const status = await runBin(DIRECTOR_BIN, ["status", "--json"], { cwd: repo.dir });
    const statusFile = join(f.dir, "status.json");
    writeFileSync(statusFile, status.stdout);

    const r = await runBin(
      ACTION_OUTPUTS_BIN,
      ["--result", result, "--status", statusFile, "--summary"],
      { cwd: repo.dir, env: { GITHUB_OUTPUT: f.output, GITHUB_STEP_SUMMARY: f.summary } },
    );
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toBe("");
    const outputs = parseOutputFile(readFileSync(f.output, "utf8"));
    expect(outputs).toEqual({
      earlier: "kept",
      "pr-number": "",
      "pr-url": "",
      "catalog-version": "0",
      "catalog-hash": checkJson.catalog_hash,
      ok: String(checkJson.ok),
    });
    const summary = readFileSync(f.summary, "utf8");
    expect(summary).toContain(`### engram Director: catalog v0 \`${checkJson.catalog_hash}\``);
    expect(summary).toMatch(/\| short-term \(ST\) \| 0 of [\d,]+ \(0\.0%\) \|/);
  });

  it("reads the result from stdin and prints to stdout outside GitHub Actions", async () => {
    const r = await runBin(ACTION_OUTPUTS_BIN, ["--result", "-"], {
      cwd: repo.dir,
      input: `${JSON.stringify(RUN_RESULT)}\n`,
      env: { GITHUB_OUTPUT: undefined, GITHUB_STEP_SUMMARY: undefined },
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseOutputFile(r.stdout)).toMatchObject({ "pr-number": "17", "catalog-version": "8" });
  });

  it("names the file when the result is not JSON, and the flag when it is missing", async () => {
    const f = files();
    const bad = join(f.dir, "bad.json");
    writeFileSync(bad, "director: internal error\n");
    const r = await runBin(ACTION_OUTPUTS_BIN, ["--result", bad], {
      cwd: repo.dir,
      env: { GITHUB_OUTPUT: f.output },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`--result ${bad}: not the JSON of a --json command`);
    expect(readFileSync(f.output, "utf8")).toBe("earlier=kept\n");

    const missing = await runBin(ACTION_OUTPUTS_BIN, [], { cwd: repo.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--result is required");
    const unknown = await runBin(ACTION_OUTPUTS_BIN, ["--nope"], { cwd: repo.dir });
    expect(unknown.code).toBe(2);
  });
});
