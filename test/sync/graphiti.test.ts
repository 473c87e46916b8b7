import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { episodeParts, searchQuery, splitBody } from "../../src/core/sync/graphiti-episode.js";
import type { SyncCandidate, SyncItem } from "../../src/core/sync/item.js";
import { itemHash } from "../../src/core/sync/item.js";
import { outgoingPublic } from "../../src/core/sync/outgoing.js";
import { DEFAULT_SCHEDULE } from "../../src/core/sync/queue.js";
import { Config, defaultConfig } from "../../src/schema/config.js";
import { runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { SyncLog } from "../../src/sync/sync-log.js";
import { GraphitiTarget } from "../../src/sync/targets/graphiti-target.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";

let server: FakeGraphiti | undefined;
let targets: GraphitiTarget[] = [];
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-graphiti-"));
});
afterEach(async () => {
  for (const t of targets) await t.close();
  targets = [];
  await server?.stop();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function target(
  url: string,
  extra: Partial<ReturnType<typeof defaultConfig>["sync"]["graphiti"]> = {},
) {
  const t = new GraphitiTarget({
    config: {
      ...defaultConfig().sync.graphiti,
      url,
      confirm_wait_seconds: 2,
      retries: 1,
      ...extra,
    },
    backoffMs: 10,
    pollMs: 20,
  });
  targets.push(t);
  return t;
}

function item(id: string, content: string, title = `Episode ${id}`): SyncItem {
  return {
    type: "episode",
    local_id: id,
    title,
    privacy: "public",
    occurred_at: "2026-01-05T10:00:00.000Z",
    fields: { timestamp: "2026-01-05T10:00:00.000Z", local_id: id, confidence: 0.9 },
    content,
  };
}

const candidate = (i: SyncItem): SyncCandidate => ({
  item: i,
  verdict: { sync: true, priority: 1, reasons: ["test"] },
});

describe("episode shaping for Graphiti", () => {
  it("splits a long body into consecutive parts that join back whole, each under 5000", () => {
    const body = Array.from({ length: 400 }, (_, i) => `line ${i} ${"w".repeat(20)}`).join("\n");
    const parts = splitBody(body);
    expect(parts.join("")).toBe(body);
    expect(parts.every((p) => p.length <= 5000)).toBe(true);
    expect(splitBody("x".repeat(12_000)).map((p) => p.length)).toEqual([5000, 5000, 2000]);
  });

  it("cuts names to 200, rejects a bad group, derives the same uuid from the same hash", () => {
    const input = {
      title: "t".repeat(300),
      body: "b".repeat(6000),
      group_id: "engram",
      source_description: "s",
      reference_time: "2026-01-05T10:00:00.000Z",
      content_hash: "sha256:abc",
    };
    const parts = episodeParts(input);
    expect(parts.map((p) => p.name.length)).toEqual([200, 200]);
    expect(parts[1]?.name.endsWith("(part 2/2)")).toBe(true);
    expect(episodeParts(input).map((p) => p.uuid)).toEqual(parts.map((p) => p.uuid));
    expect(new Set(parts.map((p) => p.uuid)).size).toBe(2);
    expect(() => episodeParts({ ...input, group_id: "bad group!" })).toThrow(/group_id/);
  });

  it("escapes Lucene characters for falkordb only", () => {
    expect(searchQuery("apt-28 (x)", "neo4j")).toBe("apt-28 (x)");
    expect(searchQuery("apt-28 (x)", "falkordb")).toBe("apt\\-28 \\(x\\)");
  });

  it("names [sync.graphiti] backend when it is neither neo4j nor falkordb", () => {
    const parsed = Config.safeParse({ sync: { graphiti: { backend: "memgraph" } } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues[0]?.path)).toBe('["sync","graphiti","backend"]');
  });
});

describe("Graphiti target against the local MCP stand-in", () => {
  it("sends an item, waits for get_episodes, and is idempotent on a second upsert", async () => {
    server = new FakeGraphiti();
    await server.start();
    const g = target(server.url);
    expect(await g.health()).toMatchObject({ healthy: true, error: null });
    const long = item("e1", "p ".repeat(6000), "apt-28 tradecraft");
    const id = await g.upsert(outgoingPublic(long, itemHash(long)), null);
    expect(id.split(",")).toHaveLength(3);
    expect(server.episodes.map((e) => e.content).join("")).toBe(long.content);
    expect(server.calls[0]?.reference_time).toBe("2026-01-05T10:00:00.000Z");
    expect(server.calls[0]?.source_description).toContain("episode:e1");
    expect(await g.upsert(outgoingPublic(long, itemHash(long)), id)).toBe(id);
    expect(server.calls).toHaveLength(3);
    // A changed item supersedes: new episodes in, the earlier ones deleted.
    const changed = item("e1", "short now", "apt-28 tradecraft");
    const id2 = await g.upsert(outgoingPublic(changed, itemHash(changed)), id);
    expect(server.episodes.map((e) => e.uuid)).toEqual([id2]);
    const falkor = target(server.url, { backend: "falkordb" });
    const found = (await falkor.searchNodes("apt-28", ["engram"])) as { nodes: unknown[] };
    expect(server.searches.at(-1)?.query).toBe("apt\\-28");
    expect(found.nodes).toHaveLength(1);
  });

  it("an {error} tool result is a failure, not a success", async () => {
    server = new FakeGraphiti();
    await server.start();
    const g = target(server.url);
    await expect(g.searchNodes("", ["engram"])).rejects.toMatchObject({ kind: "validation" });
  });

  it("an {error} result of add_memory is a failure, retried, never skipped nor sent", async () => {
    server = new FakeGraphiti();
    await server.start();
    server.errorNext("Error queuing episode: database is read-only");
    server.errorNext("Invalid group_id: bad group");
    const store = new QueueStore(dir, "graphiti");
    let seconds = 0;
    const options = {
      store,
      target: target(server.url),
      schedule: DEFAULT_SCHEDULE,
      clock: () => new Date(Date.parse("2026-01-05T10:00:00.000Z") + seconds * 1000).toISOString(),
      log: new SyncLog(join(dir, "log"), 8),
      sealKey: () => undefined,
    };
    const x = candidate(item("x", "body of x"));
    const result = await runSync([x], options);
    expect(result.sent).toMatchObject({ created_or_updated: 0, retry_later: 1, skipped: 0 });
    const record = store.load().records["episode:x"];
    expect(record).toMatchObject({ state: "pending", remote_id: null });
    expect(record?.last_error).toContain("database is read-only");
    expect(server.episodes).toHaveLength(0);
    // An error that says the input is wrong fails the item at once: counted failed, with a notice.
    const y = candidate(item("y", "body of y"));
    const second = await runSync([x, y], options);
    expect(second.sent).toMatchObject({ created_or_updated: 0, failed: 1, skipped: 0 });
    expect(store.load().records["episode:y"]).toMatchObject({
      state: "failed",
      failure: "permanent",
    });
    // Past the retry delay, x is looked up (not there) and sent: once.
    seconds = 120;
    const third = await runSync([x, y], options);
    expect(third.sent).toMatchObject({ created_or_updated: 1, failed: 0 });
    expect(server.calls.filter((c) => c.episode_body === "body of x")).toHaveLength(1);
  });

  it("keeps a dropped episode pending and delivers it on the next run, once", async () => {
    server = new FakeGraphiti();
    await server.start();
    const store = new QueueStore(dir, "graphiti");
    const log = new SyncLog(join(dir, "log"), 8);
    let tick = 0;
    const clock = () => new Date(Date.UTC(2026, 0, 5, 10, 0, tick++ * 600)).toISOString();
    const items = ["a", "b", "c"].map((id) => item(id, `body of ${id}`));
    server.dropNext();
    const options = {
      store,
      // The dropped episode waits this long for nothing; the two others must be listed
      // within it, as in every other test here, however loaded the machine.
      target: target(server.url),
      schedule: { ...DEFAULT_SCHEDULE, retry_delays_seconds: [1, 1, 1, 1, 1] },
      clock,
      log,
      sealKey: () => undefined,
    };
    const first = await runSync(items.map(candidate), options);
    expect(first.sent).toMatchObject({ created_or_updated: 2, retry_later: 1 });
    const second = await runSync(items.map(candidate), options);
    expect(second.sent).toMatchObject({ created_or_updated: 1, retry_later: 0 });
    expect(server.episodes.map((e) => e.content).sort()).toEqual([
      "body of a",
      "body of b",
      "body of c",
    ]);
    const third = await runSync(items.map(candidate), options);
    expect(third.sent.created_or_updated).toBe(0);
    expect(server.calls).toHaveLength(4);
  });

  it("retries 429 and 5xx with backoff, then succeeds; past the retries it is unavailable", async () => {
    server = new FakeGraphiti();
    await server.start();
    const g = target(server.url, { retries: 3 });
    server.httpFaultNext(429);
    server.httpFaultNext(503, 2);
    const one = item("r1", "body of r1");
    const id = await g.upsert(outgoingPublic(one, itemHash(one)), null);
    expect(server.episodes.map((e) => e.uuid)).toEqual([id]);
    const strict = target(server.url, { retries: 1 });
    server.httpFaultNext(502, 5);
    const two = item("r2", "body of r2");
    await expect(strict.upsert(outgoingPublic(two, itemHash(two)), null)).rejects.toMatchObject({
      kind: "unavailable",
    });
  });

  it("a dead server is unhealthy, never a thrown error", async () => {
    server = new FakeGraphiti();
    await server.start();
    const url = server.url;
    await server.stop();
    server = undefined;
    const h = await target(url, { retries: 0 }).health();
    expect(h).toMatchObject({ healthy: false, error: "unavailable" });
    expect(h.message).toContain("connection refused");
  });

  it("reports a server that only speaks the legacy SSE transport", async () => {
    // Graphiti MCP before 1.0: no streamable endpoint, `GET /sse` opens an event stream.
    const legacy = createServer((req, res) => {
      if (req.url === "/sse") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("event: endpoint\ndata: /messages/?session_id=1\n\n");
        return;
      }
      res.writeHead(404).end("Not Found");
    });
    await new Promise<void>((resolve) => legacy.listen(0, "127.0.0.1", resolve));
    try {
      const port = (legacy.address() as AddressInfo).port;
      const h = await target(`http://127.0.0.1:${port}/mcp/`).health();
      expect(h).toMatchObject({ healthy: false, error: "unavailable" });
      expect(h.message).toContain("legacy SSE transport");
    } finally {
      legacy.closeAllConnections();
      await new Promise<void>((resolve) => legacy.close(() => resolve()));
    }
  });
});
