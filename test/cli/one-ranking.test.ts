/**
 * One ranking: `worker recall`, `worker context` and their MCP tools order what matches a
 * question the same way. The notes below tie under a count of matched words (a short note
 * and a long one holding the same words, the words side by side or far apart): a ranking of
 * its own in `worker context` would order them differently from recall.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf } from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, type TempRepo } from "../support/repo.js";
import { dir, expectExit, initRepo, useCliHarness, wrk } from "./cli-harness.js";

useCliHarness();

const QUERY = "retry payment webhooks with jitter";
const DECISIONS = [
  "Retry payment webhooks with jitter and a cap",
  "Webhooks for payment events are signed; a retry after a timeout uses exponential backoff, and jitter is added by the client library in every region we serve",
  "Payment retries stop after five attempts",
  "Every retry of a failed job in the nightly batch queue waits an hour, and payment reports are written to the warehouse once the queue is empty",
  "Webhooks are queued",
  "The team discussed whether webhooks delivered from the staging environment should be queued or dropped during the nightly maintenance window",
];

let repo: TempRepo;
let mcp: Client | undefined;

beforeAll(async () => {
  repo = await initRepo("[memory]\nbuffer_keep_recent_events = 0\n");
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: init"]);
  for (const text of DECISIONS) {
    expectExit(await wrk(repo, ["emit", "--kind", "decision", "--text", text]), 0);
  }
  expectExit(await dir(repo, ["run", "--flush", "--json"]), 0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: memory"]);
}, 120_000);

afterAll(async () => {
  await mcp?.close();
});

interface Hit {
  text: string;
}
interface Item {
  text: string;
  via: string;
}

const matchesOf = (items: Item[]) => items.filter((i) => i.via === "match").map((i) => i.text);

describe("one ranking", () => {
  it("worker context orders its matches as worker recall ranks them", async () => {
    const recalled = await wrk(repo, [
      "recall",
      QUERY,
      "--scope",
      "st,lt",
      "--json",
      "--no-signal",
    ]);
    expectExit(recalled, 0);
    const hits = jsonOf<Hit[]>(recalled).map((h) => h.text);
    expect([...hits].sort()).toEqual([...DECISIONS].sort());
    const context = await wrk(repo, ["context", QUERY, "--json"]);
    expectExit(context, 0);
    expect(matchesOf(jsonOf<{ items: Item[] }>(context).items)).toEqual(hits);
  });

  it("MCP memory_context orders its matches as memory_recall ranks them", async () => {
    mcp = await stdioMcpClient(repo.dir, {});
    const recalled = await mcp.callTool({
      name: "memory_recall",
      arguments: { query: QUERY, history: false },
    });
    const hits = (recalled.structuredContent as { hits: Hit[] }).hits.map((h) => h.text);
    expect(hits).toHaveLength(DECISIONS.length);
    const context = await mcp.callTool({ name: "memory_context", arguments: { topic: QUERY } });
    expect(matchesOf((context.structuredContent as { items: Item[] }).items)).toEqual(hits);
  });
});
