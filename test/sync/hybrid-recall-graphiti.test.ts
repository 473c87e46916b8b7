/**
 * Hybrid recall reaches a configured knowledge graph from any clone, not only from the one
 * that synced to it: `worker recall --confidence` against the Graphiti stand-in, with each
 * backend's escaping of the search text, and no call where the confidence rules say not to.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GraphitiSyncConfig } from "../../src/schema/config.js";
import { GRAPHITI_DEFAULT_URL } from "../../src/sync/hybrid-recall.js";
import { assertBuilt, director, succeeded, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let server: FakeGraphiti | undefined;
const env = { SOURCE_DATE_EPOCH: "1767607200" };

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

/** A clone that never ran a sync, whose config names the graph, holding `notes` as memory. */
async function clone(url: string, backend: string, notes: string[]): Promise<TempRepo> {
  const repo = dirs.repo("engram-graphiti-recall-");
  succeeded(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(
    [
      "[memory]",
      "buffer_keep_recent_events = 0",
      "[sync.graphiti]",
      `url = "${url}"`,
      `backend = "${backend}"`,
      "",
    ].join("\n"),
  );
  for (const text of notes) {
    succeeded(await worker(["emit", "--kind", "lesson", "--text", text], { cwd: repo.dir, env }));
  }
  succeeded(await director(["run", "--flush"], { cwd: repo.dir, env }));
  return repo;
}

const recall = (repo: TempRepo, confidence: string) =>
  worker(["recall", "apt-28", "--confidence", confidence, "--no-signal", "--json"], {
    cwd: repo.dir,
    env,
    timeoutMs: 60_000,
  });

describe("hybrid recall and the knowledge graph", () => {
  it("counts the graph as configured only off the default url every init writes", () => {
    expect(GraphitiSyncConfig.parse({}).url).toBe(GRAPHITI_DEFAULT_URL);
  });

  for (const [backend, sent] of [
    ["falkordb", "apt\\-28"],
    ["neo4j", "apt-28"],
  ] as const) {
    it(`below 0.5 asks it at once, with the ${backend} form of the query`, async () => {
      server = new FakeGraphiti();
      await server.start();
      const repo = await clone(server.url, backend, ["retry the flaky fetch twice"]);
      succeeded(await recall(repo, "0.3"));
      expect(server.searches.length).toBeGreaterThan(0);
      expect(new Set(server.searches.map((s) => s.query))).toEqual(new Set([sent]));
    });
  }

  it("from 0.5 to 0.7 does not ask it when local memory answers", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = await clone(server.url, "neo4j", ["apt-28 used a renamed binary"]);
    const r = succeeded(await recall(repo, "0.6"));
    expect((JSON.parse(r.stdout) as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
    expect(server.searches).toEqual([]);
    // On a local miss in the same band, it does.
    const miss = await clone(server.url, "neo4j", ["retry the flaky fetch twice"]);
    succeeded(await recall(miss, "0.6"));
    expect(server.searches.length).toBeGreaterThan(0);
  });
});
