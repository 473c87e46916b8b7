/**
 * One memory: whatever a write path records, every read path finds. Each write path records a
 * decision (or, where the path has no decisions, a learning) holding a word of its own; the
 * memory is made durable as the docs say (`director run --flush`, a commit); then every read
 * path is asked for every word. Each cell of write paths x read paths is a test of its own.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeResult, jsonOf } from "../support/bins.js";
import { note } from "../support/envelopes.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, type TempRepo } from "../support/repo.js";
import { dir, expectExit, initRepo, inputFile, useCliHarness, wrk } from "./cli-harness.js";

useCliHarness();

/** Write path -> the word only its decision holds. */
const WORDS = {
  "worker emit": "quokka",
  "director ingest (envelopes)": "axolotl",
  "worker session": "wombat",
  "MCP memory_emit": "pangolin",
  "director ingest --from-git": "narwhal",
  "director ingest --from-seed": "okapi",
} as const;
type WritePath = keyof typeof WORDS;

const SEED = {
  version: "1.0.0",
  identity: { principalName: "Ada", aiName: "Helper" },
  learned: {
    patterns: [
      {
        id: "pat_okapi",
        content: "Okapi reviews happen before every release",
        source: "session_2026-03-02",
        extractedAt: "2026-03-02T10:30:00Z",
        confirmedAt: "2026-03-02T10:35:00Z",
        confirmed: true,
        tags: ["release"],
      },
    ],
    insights: [],
    selfKnowledge: [],
  },
  state: { proposals: [] },
};

let repo: TempRepo;
let mcp: Client;
/** Each reader's answer, read once: the cells of its row look into it. */
const answers = new Map<string, Promise<string>>();

async function write(path: WritePath): Promise<void> {
  const word = WORDS[path];
  const text = `Use ${word} builds for the release`;
  switch (path) {
    case "worker emit": {
      const r = await wrk(repo, [
        "emit",
        "--kind",
        "decision",
        "--text",
        text,
        "--rationale",
        "fast",
      ]);
      expectExit(r, 0);
      return;
    }
    case "director ingest (envelopes)": {
      const file = inputFile("notes.ndjson", [
        note("decision", text, { rationale: "cheap", eventId: `ev-${word}` }),
      ]);
      expectExit(await dir(repo, ["ingest", file, "--json"]), 0);
      return;
    }
    case "worker session": {
      const started = jsonOf<{ session_id: string }>(
        await wrk(repo, ["session", "start", "--name", "matrix", "--json"]),
      );
      const id = started.session_id;
      const args = ["--kind", "decision", "--text", text, "--rationale", "weekly"];
      expectExit(
        await wrk(repo, ["session", "write", "--session", id, ...args, "--confidence", "0.95"]),
        0,
      );
      expectExit(await wrk(repo, ["session", "end", id]), 0);
      return;
    }
    case "MCP memory_emit": {
      const r = await mcp.callTool({
        name: "memory_emit",
        arguments: { kind: "decision", text, rationale: "agents" },
      });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      return;
    }
    case "director ingest --from-git": {
      writeFileSync(join(repo.dir, "build.txt"), `${word}\n`);
      git(repo.dir, ["add", "build.txt"]);
      git(repo.dir, ["commit", "-qm", `Adopt ${word} builds instead of make`]);
      expectExit(await dir(repo, ["ingest", "--from-git", "main", "--json"]), 0);
      return;
    }
    case "director ingest --from-seed": {
      const file = join(repo.dir, "..", `seed-${word}.json`);
      writeFileSync(file, JSON.stringify(SEED));
      expectExit(await dir(repo, ["ingest", "--from-seed", file, "--json"]), 0);
      return;
    }
  }
}

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
  for (const path of Object.keys(WORDS) as WritePath[]) await write(path);
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
