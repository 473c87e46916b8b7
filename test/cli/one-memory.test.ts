/**
 * One memory: whatever a write path records, every read path finds. Each write path records a
 * decision (or, where the path has no decisions, a learning) holding a word of its own; the
 * memory is made durable as the docs say (`director run --flush`, a commit); then every read
 * path is asked for every word. Each cell of write paths x read paths is a test of its own.
 */
import { readFileSync } from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeResult, jsonOf } from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, type TempRepo } from "../support/repo.js";
import { dir, expectExit, initRepo, useCliHarness, wrk } from "./cli-harness.js";
import { WORDS, type WritePath, writeDecision } from "./one-memory-writes.js";

useCliHarness();

let repo: TempRepo;
let mcp: Client;
/** Each reader's answer, read once: the cells of its row look into it. */
const answers = new Map<string, Promise<string>>();

/** The read paths, each answering with text the cells search for their word. */
const READERS: Record<string, (word: string) => Promise<string>> = {
  "worker recall": async (word) => {
    const r = await wrk(repo, ["recall", word, "--json", "--no-signal"]);
    expectExit(r, 0);
    return r.stdout;
  },
  "worker context": async (word) => {
    const r = await wrk(repo, ["context", word, "--json"]);
    expectExit(r, 0);
    return JSON.stringify(jsonOf<{ items: unknown[] }>(r).items);
  },
  "worker freshness": async () => (await wrk(repo, ["freshness", "--all", "--json"])).stdout,
  "worker learnings": async () => (await wrk(repo, ["learnings", "--json"])).stdout,
  "MEMORY.md": async () => readFileSync(repo.path("MEMORY.md"), "utf8"),
  "MCP memory_recall": async (word) =>
    JSON.stringify(await mcp.callTool({ name: "memory_recall", arguments: { query: word } })),
  "MCP memory_context": async (word) =>
    JSON.stringify(await mcp.callTool({ name: "memory_context", arguments: { topic: word } })),
  "director diff": async () => {
    const history = jsonOf<{ versions: { version: number }[] }>(
      await dir(repo, ["history", "--json"]),
    );
    const newest = Math.max(...history.versions.map((v) => v.version));
    const r = await dir(repo, ["diff", "1", String(newest), "--json"]);
    expectExit(r, 0);
    return r.stdout;
  },
};

beforeAll(async () => {
  repo = await initRepo("[memory]\nbuffer_keep_recent_events = 0\n");
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: init"]);
  // A first version, so that `director diff 1 N` shows what every write path added.
  expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "The baseline note"]), 0);
  expectExit(await dir(repo, ["run", "--flush", "--json"]), 0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: baseline"]);

  mcp = await stdioMcpClient(repo.dir, {});
  for (const path of Object.keys(WORDS) as WritePath[]) await writeDecision(repo, mcp, path);
  const run = await dir(repo, ["run", "--flush", "--json"]);
  expect(run.code, describeResult(run)).toBe(0);
  expectExit(await dir(repo, ["verify"]), 0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: memory"]);
}, 240_000);

afterAll(async () => {
  await mcp?.close();
});

describe("one memory: every write path's knowledge reaches every read path", () => {
  for (const [reader, read] of Object.entries(READERS)) {
    describe(reader, () => {
      for (const [path, word] of Object.entries(WORDS) as [WritePath, string][]) {
        it(`finds what ${path} wrote (${word})`, async () => {
          const key = `${reader}\n${reader.includes("recall") || reader.includes("context") ? word : ""}`;
          let answer = answers.get(key);
          if (answer === undefined) {
            answer = read(word);
            answers.set(key, answer);
          }
          expect((await answer).toLowerCase()).toContain(word);
        });
      }
    });
  }
});
