/**
 * One memory, the sync columns: whatever a write path records as public reaches every external
 * store (the Notion, Graphiti and Tana stand-ins) exactly once, and what is private reaches
 * none. The rows are one-memory.test.ts's write paths, each writing public (`--privacy public`
 * for git history and seeds, whose default is private), and `worker emit`, a session, git
 * history and a seed also a private one each. The policy's thresholds are lowered so that a single decision is
 * eligible: the same rules, for engrams and sessions' knowledge alike.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Env, jsonOf } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { FakeNotion } from "../support/fake-notion.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, type TempRepo } from "../support/repo.js";
import { dir, expectExit, initRepo, useCliHarness } from "./cli-harness.js";
import { STATES_PRIVACY, WORDS, type WritePath, writeDecision } from "./one-memory-writes.js";

useCliHarness();

interface Row {
  path: WritePath;
  word: string;
  privacy: "public" | "private";
}

const ROWS: Row[] = [
  ...[...STATES_PRIVACY].map((path) => ({ path, word: WORDS[path], privacy: "public" as const })),
  { path: "worker emit", word: "ibex", privacy: "private" },
  { path: "worker session", word: "tapir", privacy: "private" },
  { path: "director ingest --from-git", word: "kinkajou", privacy: "private" },
  { path: "director ingest --from-seed", word: "dugong", privacy: "private" },
];

const TOKENS = { NOTION_TOKEN: "secret_matrix", TANA_TOKEN: "in-tok", TANA_LOCAL_TOKEN: "loc-tok" };
// The writers' clock, not SOURCE_DATE_EPOCH: the Director's stamps must not precede the notes'.
const env: Env = { ...TOKENS };

let repo: TempRepo;
let mcp: Client;
const notion = new FakeNotion({ token: TOKENS.NOTION_TOKEN, perSecond: 100 });
const graphiti = new FakeGraphiti();
const tana = new FakeTana({
  token: TOKENS.TANA_TOKEN,
  localToken: TOKENS.TANA_LOCAL_TOKEN,
  perSecond: QUICK_TANA_RATE,
});

interface RunJson {
  sent: { created_or_updated: number; failed: number; retry_later: number; deferred: number };
}

/** The sync's clock, an hour a run: a retry is due and a lost answer settled at the next. */
let syncEpoch = 0;

async function syncRun(target: string, run: number): Promise<RunJson> {
  const at = { ...env, SOURCE_DATE_EPOCH: String(syncEpoch + run * 3600) };
  const r = await dir(repo, ["sync", "run", "--target", target, "--force", "--json"], { env: at });
  return jsonOf<RunJson>(r);
}

/** What each store holds, one text per remote item (page, episode, node). */
const STORES: Record<string, () => string[]> = {
  Notion: () =>
    ["Episodes", "Insights", "Patterns", "Evolution"].flatMap((title) =>
      notion.store.pagesOf(title).map((p) => `${JSON.stringify(p.properties)}\n${p.content}`),
    ),
  "knowledge graph (Graphiti)": () =>
    graphiti.episodes.map((e) => `${e.name}\n${e.content}\n${e.source_description}`),
  Tana: () =>
    [...tana.store.nodes.values()]
      .filter((n) => n.kind === "node" && !n.inTrash)
      .map((n) => `${n.name}\n${n.description}`),
};

/** The last run of each target: it must send nothing (exactly once, not at least once). */
const last = new Map<string, RunJson>();

beforeAll(async () => {
  await notion.start();
  await graphiti.start();
  await tana.start();
  repo = await initRepo(
    [
      "[memory]",
      "buffer_keep_recent_events = 0",
      "[sync]",
      'project = "matrix"',
      // One statement is enough here: the thresholds are the policy's, for engrams and
      // sessions' knowledge alike.
      "insight_validated_min_evidence = 1",
      "insight_validated_min_confidence = 0",
      "insight_pending_min_evidence = 1",
      "insight_pending_min_confidence = 0",
      "[sync.notion]",
      `base_url = "${notion.url}"`,
      'parent_page_id = "parent-page"',
      "requests_per_second = 50",
      "[sync.graphiti]",
      `url = "${graphiti.url}"`,
      "confirm_wait_seconds = 5",
      "[sync.tana]",
      `endpoint = "${tana.inputUrl}"`,
      `local_api_url = "${tana.localUrl}"`,
      `calls_per_second = ${tana.perSecond}`,
      "",
    ].join("\n"),
  );
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: init"]);
  mcp = await stdioMcpClient(repo.dir, {});
  // Public and private notes are made durable apart: an engram is as private as its most
  // private note, and this matrix is about each path, not about their mixing.
  for (const privacy of ["public", "private"] as const) {
    for (const row of ROWS.filter((r) => r.privacy === privacy)) {
      const stated = STATES_PRIVACY.has(row.path) ? { privacy } : {};
      await writeDecision(repo, mcp, row.path, { word: row.word, ...stated });
    }
    expectExit(await dir(repo, ["run", "--flush", "--json"], { env }), 0);
  }
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: memory"]);
  expectExit(await dir(repo, ["sync", "init", "--target", "notion"], { env }), 0);
  // Sync runs after memory was written, on a clock of their own (the Director's is not moved).
  syncEpoch = Math.floor(Date.now() / 1000);
  // A bad day: Notion creates the first pages and loses its answers; the knowledge graph
  // answers "queued" for two episodes and never stores them. The next run finds the pages by
  // their sync keys (updates, not doubles) and sends the lost episodes again.
  notion.inject({ kind: "lost", method: "POST", path: /^\/v1\/pages$/ }, 3);
  graphiti.dropNext(2);
  for (const target of ["notion", "graphiti", "tana"]) {
    for (let run = 0; run < 3; run++) last.set(target, await syncRun(target, run));
  }
}, 600_000);

afterAll(async () => {
  await mcp?.close();
  await Promise.all([notion.stop(), graphiti.stop(), tana.stop()]);
});

describe("one memory: sync sends every public write path's decision once, no private one", () => {
  it("the lost answers happened, and the last run of each target sends nothing", () => {
    expect(notion.lostAnswers).toBe(3);
    // Each dropped episode was sent again: two more calls than episodes stored.
    expect(graphiti.calls.length).toBeGreaterThanOrEqual(graphiti.episodes.length + 2);
    for (const [target, run] of last) {
      expect(run.sent, target).toMatchObject({ created_or_updated: 0, failed: 0, deferred: 0 });
    }
  });

  for (const [store, read] of Object.entries(STORES)) {
    describe(store, () => {
      for (const row of ROWS) {
        const expected = row.privacy === "public" ? 1 : 0;
        it(`holds ${row.path}'s ${row.privacy} decision (${row.word}) ${expected === 1 ? "once" : "nowhere"}`, () => {
          const holding = read().filter((text) => text.toLowerCase().includes(row.word));
          expect(holding, holding.join("\n---\n")).toHaveLength(expected);
        });
      }
    });
  }
});
