/**
 * Every worker command that sends uses the worker's bus (issue 36): a recall's promotion
 * signal (`worker recall`, MCP `memory_recall`) from a clone whose config names `git:origin`
 * reaches the Director's checkout.
 * Real repositories: a bare origin, the Director's checkout, a clone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, TempDirs } from "../support/repo.js";
import { waitUntil } from "../support/wait.js";

const dirs = new TempDirs();
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
let origin: string;
let directorDir: string;

function clone(): string {
  const dir = join(dirs.dir("engram-bus-signals-clone-"), "repo");
  git(origin, ["clone", "-q", origin, dir]);
  return dir;
}

interface Run {
  sources: { source: string; accepted: number }[];
}

/** The Director's recall counts, by engram. */
function recallCounts(): Record<string, number> {
  const meta = JSON.parse(
    readFileSync(join(directorDir, ".engram", "buffer", "meta.json"), "utf8"),
  ) as { recall_counts: Record<string, number> };
  return meta.recall_counts;
}

beforeAll(async () => {
  assertBuilt();
  const template = dirs.repo("engram-bus-signals-template-");
  jsonOf(await director(["init", "--json"], { cwd: template.dir }));
  git(template.dir, ["add", "-A"]);
  git(template.dir, ["commit", "-q", "-m", "engram init"]);
  origin = join(dirs.dir("engram-bus-signals-origin-"), "origin.git");
  git(template.dir, ["init", "-q", "--bare", "-b", "main", origin]);
  git(template.dir, ["push", "-q", origin, "main"]);
  // The Director's checkout drains git:origin; its first memory goes to main.
  directorDir = clone();
  const init = await director(["init", "--bus", "git:origin"], { cwd: directorDir, env: GIT_ENV });
  expect(init.code, describeResult(init)).toBe(0);
  const note = await worker(
    ["emit", "--kind", "lesson", "--text", "The flaky canary test needs a warm cache", "--json"],
    { cwd: directorDir, env: GIT_ENV },
  );
  expect(note.code, describeResult(note)).toBe(0);
  jsonOf(await director(["run", "--flush", "--json"], { cwd: directorDir, env: GIT_ENV }));
  git(directorDir, ["add", "-A"]);
  git(directorDir, ["commit", "-q", "-m", "memory"]);
  git(directorDir, ["push", "-q", "origin", "HEAD:main"]);
});
afterAll(() => dirs.cleanup());

describe("recall signals use the worker's bus", () => {
  it("a recall in a clone whose config says git:origin counts at the Director", async () => {
    const agent = clone();
    writeFileSync(join(agent, "config", "dev.toml"), '[worker]\nbus = "git:origin"\n');
    const recalled = await worker(["recall", "flaky canary cache", "--json"], {
      cwd: agent,
      env: GIT_ENV,
    });
    expect(recalled.code, describeResult(recalled)).toBe(0);
    const hits = jsonOf<{ engram_id?: string }[]>(recalled);
    const engram = hits[0]?.engram_id;
    expect(engram).toMatch(/^e_/);
    expect(recalled.stderr).toBe("");
    // Nothing waits in the clone's spool.
    const check = await worker(["check", "--offline", "--json"], { cwd: agent, env: GIT_ENV });
    expect(JSON.parse(check.stdout)).toMatchObject({ undrained_spool: null });

    const run = jsonOf<Run>(
      await director(["run", "--flush", "--json"], { cwd: directorDir, env: GIT_ENV }),
    );
    expect(run.sources).toEqual([expect.objectContaining({ source: "git:origin", accepted: 1 })]);
    expect(recallCounts()[engram as string]).toBe(1);
  });

  it("MCP memory_recall sends its signal over the worker's bus too", async () => {
    const agent = clone();
    writeFileSync(join(agent, "config", "dev.toml"), '[worker]\nbus = "git:origin"\n');
    const before = recallCounts();
    const refs = () => git(origin, ["for-each-ref", "--format=%(refname)", "refs/engram/events/"]);
    const refsBefore = refs();
    const client = await stdioMcpClient(agent, GIT_ENV);
    let engram: string | undefined;
    try {
      const r = await client.callTool({
        name: "memory_recall",
        arguments: { query: "flaky canary cache" },
      });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      const hits = (r.structuredContent as { hits: { engram_id?: string }[] }).hits;
      engram = hits.find((h) => h.engram_id !== undefined)?.engram_id;
      expect(engram).toMatch(/^e_/);
      // The signal is sent after the answer: wait for it to reach origin.
      await waitUntil(() => refs() !== refsBefore, "the recall signal's ref on origin");
    } finally {
      await client.close();
    }
    const run = jsonOf<Run>(
      await director(["run", "--flush", "--json"], { cwd: directorDir, env: GIT_ENV }),
    );
    expect(run.sources).toEqual([expect.objectContaining({ source: "git:origin", accepted: 1 })]);
    expect(recallCounts()[engram as string]).toBe((before[engram as string] ?? 0) + 1);
  });

  it("a bus that refuses the signal costs the recall nothing: it answers, says why, spools nothing", async () => {
    const agent = clone();
    writeFileSync(join(agent, "config", "dev.toml"), '[worker]\nbus = "git:upstream"\n');
    const recalled = await worker(["recall", "flaky canary cache", "--json"], {
      cwd: agent,
      env: GIT_ENV,
    });
    expect(recalled.code, describeResult(recalled)).toBe(0);
    expect(jsonOf<unknown[]>(recalled).length).toBeGreaterThan(0);
    expect(recalled.stderr).toContain("the recall signal was not sent");
    expect(recalled.stderr).toContain('no remote named "upstream"');
    const check = await worker(["check", "--offline", "--json"], { cwd: agent, env: GIT_ENV });
    expect(JSON.parse(check.stdout)).toMatchObject({ undrained_spool: null });
  });
});
