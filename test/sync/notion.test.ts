import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { itemHash } from "../../src/core/sync/item.js";
import { outgoingPublic } from "../../src/core/sync/outgoing.js";
import { episodeVerdict } from "../../src/core/sync/policy.js";
import { DEFAULT_SCHEDULE } from "../../src/core/sync/queue.js";
import { defaultConfig } from "../../src/schema/config.js";
import { runSync } from "../../src/sync/engine.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { SyncLog } from "../../src/sync/sync-log.js";
import { NotionTarget } from "../../src/sync/targets/notion-target.js";
import { FakeNotion } from "../support/fake-notion.js";
import { episodeItem } from "../support/sync-items.js";

const TOKEN = "secret_test_token";
let server: FakeNotion;
let dir: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "engram-notion-"));
});
afterEach(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function target(perSecond = 50, extra: { timeout_seconds?: number } = {}): NotionTarget {
  const config = defaultConfig().sync.notion;
  return new NotionTarget({
    config: {
      ...config,
      base_url: server.url,
      parent_page_id: "parent-page",
      requests_per_second: perSecond,
      ...extra,
    },
    token: TOKEN,
    recorded: {},
  });
}

const item = episodeItem;

describe("Notion target against the local Notion server", () => {
  it("creates the databases, writes pages within Notion's limits, finds and updates them", async () => {
    server = new FakeNotion({ token: TOKEN });
    await server.start();
    const notion = target();
    const report = await notion.ensureSchema();
    expect(report.created).toEqual(["episode", "insight", "pattern", "evolution"]);
    expect((await notion.health()).healthy).toBe(true);
    // 150 paragraphs, one of 4,500 characters: chunked at 2000, appended 100 blocks at a time.
    const long = [
      "x".repeat(4500),
      ...Array.from({ length: 149 }, (_, i) => `paragraph ${i}`),
    ].join("\n\n");
    const one = item("e1", long);
    const id = await notion.upsert(outgoingPublic(one, itemHash(one)), null);
    const [page] = server.store.pagesOf("Episodes");
    expect(page?.content).toBe(long);
    expect(page?.key).toBe("episode:e1");
    expect(await notion.findByKey("episode", "episode:e1")).toBe(id);
    expect(await notion.findByKey("episode", "episode:nope")).toBeNull();
    const changed = item("e1", "short now");
    expect(await notion.upsert(outgoingPublic(changed, itemHash(changed)), id)).toBe(id);
    expect(server.store.pagesOf("Episodes").map((p) => p.content)).toEqual(["short now"]);
    expect(server.doubles()).toEqual([]);
  });

  it("reports a schema change, an invalid token and a dead server as their kinds", async () => {
    server = new FakeNotion({ token: TOKEN });
    await server.start();
    const notion = target();
    await notion.ensureSchema();
    server.removeProperty("Episodes", "surprise_score");
    const h = await notion.health();
    expect(h).toMatchObject({ healthy: false, error: "schema" });
    expect(h.schema.episode).toContain("surprise_score");
    const one = item("e1", "text");
    await expect(notion.upsert(outgoingPublic(one, itemHash(one)), null)).rejects.toMatchObject({
      kind: "schema",
    });
    await notion.ensureSchema();
    expect((await notion.health()).healthy).toBe(true);
    server.inject({ kind: "status", status: 401 });
    expect(await notion.health()).toMatchObject({ healthy: false, error: "auth" });
    server.setDown(true);
    expect(await notion.health()).toMatchObject({ healthy: false, error: "unavailable" });
  });

  it("200 items through 429 bursts, a stretch of 500s, down, then up: each exactly once", async () => {
    server = new FakeNotion({ token: TOKEN, perSecond: 40 });
    await server.start();
    const notion = target(40, { timeout_seconds: 2 });
    // Setting up also warms the server up (a cold process reads its first requests late, so
    // they look bunched); the pacing is judged from here on.
    await notion.ensureSchema();
    server.rateViolations = 0;
    const candidates: SyncCandidate[] = Array.from({ length: 200 }, (_, i) => {
      const confidence = (i % 10) / 10;
      const outcome = i % 3 === 0 ? "failure" : i % 3 === 1 ? "success" : "partial";
      const one = item(`ep${i}`, `episode ${i}`, { fields: { confidence, outcome } });
      return { item: one, verdict: episodeVerdict({ confidence, outcome }) };
    });
    const eligible = candidates
      .filter((c) => c.verdict.sync)
      .map((c) => `episode:${c.item.local_id}`);
    let seconds = 0;
    const run = () =>
      runSync(candidates, {
        store: new QueueStore(dir, "notion"),
        target: notion,
        schedule: DEFAULT_SCHEDULE,
        clock: () => new Date(Date.parse("2026-01-05T10:00:00Z") + seconds * 1000).toISOString(),
        log: new SyncLog(join(dir, "log"), 8),
        sealKey: () => undefined,
      });
    // A burst longer than the client's own retries: the engine waits out Retry-After.
    server.inject({ kind: "status", status: 429, retryAfter: 1, method: "POST" }, 3);
    const first = await run();
    expect(first.sent).toMatchObject({ created_or_updated: 0, retry_later: 1 });
    // A burst the client rides out (the third try meets a 500), then more 500s: three failed
    // items in a row end the run.
    server.inject({ kind: "status", status: 429, retryAfter: 1, method: "POST" }, 2);
    server.inject({ kind: "status", status: 500, method: "POST" }, 3);
    seconds += 1;
    const second = await run();
    expect(second.sent).toMatchObject({ created_or_updated: 0, retry_later: 3 });
    // A request the server carries out but never answers: retried later, found, not doubled.
    server.inject({ kind: "hang", process: true, method: "POST" });
    seconds += 400;
    const third = await run();
    expect(third.sent.retry_later).toBe(1);
    server.setDown(true);
    seconds += 400;
    const down = await run();
    expect(down.mode).toBe("local-only");
    server.setDown(false);
    for (let i = 0; i < 6; i++) {
      seconds += 2000;
      const r = await run();
      if (r.depth.pending === 0) break;
    }
    const keys = server.store
      .pagesOf("Episodes")
      .map((p) => p.key)
      .sort();
    expect(keys).toEqual([...eligible].sort());
    expect(server.doubles()).toEqual([]);
    seconds += 2000;
    const again = await run();
    expect(again.sent.created_or_updated).toBe(0);
    expect(server.rateViolations).toBe(0);
    expect(server.earlyRequests).toBe(0);
  });
});
