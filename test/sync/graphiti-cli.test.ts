import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, type BinResult, describeResult, director, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs } from "../support/repo.js";

const EPOCH = 1_767_607_200; // 2026-01-05T10:00:00Z
const dirs = new TempDirs();
let server: FakeGraphiti | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

const env = { SOURCE_DATE_EPOCH: String(EPOCH) };

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

describe("director sync --target graphiti through the bins", () => {
  it("sends memory's episodes to the stand-in, once, and the process exits", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = dirs.repo("engram-graphiti-");
    ok(await director(["init"], { cwd: repo.dir }));
    repo.writeConfig(
      [
        "[memory]",
        "buffer_keep_recent_events = 0",
        "[sync.graphiti]",
        `url = "${server.url}"`,
        "confirm_wait_seconds = 5",
        "",
      ].join("\n"),
    );
    const notes = [
      {
        kind: "lesson",
        text: "apt-28 used a renamed binary",
        confidence: 0.95,
        outcome: "failure",
        privacy: "public",
        topics: ["t"],
      },
      {
        kind: "lesson",
        text: "retry the flaky fetch twice",
        confidence: 0.95,
        outcome: "failure",
        privacy: "public",
        topics: ["t"],
      },
    ];
    const file = repo.write("notes.ndjson", `${notes.map((n) => JSON.stringify(n)).join("\n")}\n`);
    ok(await worker(["emit", "--from", file], { cwd: repo.dir, env }));
    ok(await director(["run", "--force"], { cwd: repo.dir, env }));
    const sync = async (...args: string[]) =>
      JSON.parse(ok(await director(["sync", ...args, "--json"], { cwd: repo.dir, env })).stdout);
    const status = await sync("status", "--target", "graphiti");
    expect(status.health.healthy).toBe(true);
    const first = await sync("run", "--target", "graphiti", "--force");
    expect(first.sent.created_or_updated).toBeGreaterThan(0);
    expect(first.sent.failed).toBe(0);
    const sent = server.calls.length;
    expect(server.episodes.map((e) => e.group_id)).toContain("engram");
    const second = await sync("run", "--target", "graphiti", "--force");
    expect(second.sent.created_or_updated).toBe(0);
    expect(server.calls.length).toBe(sent);

    // Hybrid recall asks the graph memory syncs to, with the query as the backend reads it.
    const recall = JSON.parse(
      ok(
        await worker(["recall", "apt-28", "--confidence", "0.2", "--no-signal", "--json"], {
          cwd: repo.dir,
          env,
        }),
      ).stdout,
    );
    expect(recall.remote.targets).toEqual([
      expect.objectContaining({ target: "graphiti", state: "queried" }),
    ]);
    expect(recall.remote_hits[0]).toMatchObject({ source: "graphiti", cached: false });
    expect(recall.remote_hits[0].title).toContain("apt-28");
    expect(server.searches.map((s) => s.tool).sort()).toEqual([
      "search_memory_facts",
      "search_nodes",
    ]);
  });
});
